package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/textsafe"
)

func init() {
	ops.AddDescribed(&agentOps, spec(agentapi.OpSubmitTask, "Submit agent task",
		"Hand a prompt to a local agent runtime working in a workdir. Returns at once with the task; follow it with read_agent_task_events. An idempotency key makes resubmission safe.",
		ops.Spec{Destructive: true, Idempotent: true}), (*Engine).describeSubmit, (*Engine).submitOp)
}

// describeSubmit describes submit_agent_task: the runtime, its access,
// where it works and the prompt.
func (*Engine) describeSubmit(a agentapi.SubmitArgs, dc policy.DescribeContext) (policy.Action, error) {
	var act policy.Action
	dir := orDefault(a.Cwd, ".")
	if loc, ok, err := dc.Locate(a.Workdir, dir); ok {
		dir = act.Touch(loc)
		if real, ok := loc.Resolved(); ok {
			dir += " (links resolved: " + real + ")"
		}
		// The directory it works in is bound, as a command's is.
		if ext, ok, err := dc.MeasureDir(a.Workdir, a.Cwd); ok && err == nil {
			act.Bind("cwd", ext)
		}
	} else if err != nil {
		// The engine reports a bad workdir its own way.
		dir = a.Workdir
		act.Touches = []policy.Touch{{Location: policy.Location{Workdir: a.Workdir}}}
	}
	access := orDefault(a.Access, "read-only")
	act.Add("Runtime", a.Runtime)
	act.Add("Model", orDefault(a.Model, "runtime default"))
	act.Add("Access", access)
	act.Add("Directory", dir)
	act.Add("Continues task", a.ContinueTaskID)
	act.Add("Prompt", a.Prompt)
	act.Summary = fmt.Sprintf("agent task on %s (%s) in %s, prompt %d bytes", a.Runtime, access, dir, len(a.Prompt))
	return act, nil
}

func init() {
	ops.AddDescribed(&agentOps, spec(agentapi.OpCancelTask, "Cancel agent task",
		"Stop a task: its turn is interrupted and the runtime ended; it becomes cancelled.",
		ops.Spec{NoAsk: true, Destructive: true, Idempotent: true}), (*Engine).describeCancel, (*Engine).cancelOp)
}

// describeCancel describes cancel_agent_task.
func (*Engine) describeCancel(a agentapi.TaskArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, "", nil), nil
}

var knownDecisions = map[string]bool{"accept": true, "acceptForSession": true, "decline": true, "cancel": true}

func (e *Engine) info(t Task, reqs []StoredRequest, manifest bool) agentapi.TaskInfo {
	ti := agentapi.TaskInfo{TaskID: t.ID, Status: string(t.Status), Terminal: t.Status.Terminal(), Reason: t.Reason,
		Runtime: t.Runtime, Model: t.Model, Workdir: t.Workdir, Cwd: t.Cwd, Access: string(t.Access),
		Created: t.Created, Updated: t.Updated, SessionID: t.SessionID, TurnID: t.TurnID, Turns: t.Turns,
		LastSeq: t.LastSeq, ManifestSHA256: t.ManifestSHA256, PolicyFingerprint: t.PolicyFingerprint,
		Pending: []agentapi.PendingInfo{}}
	if !t.Ended.IsZero() {
		ended := t.Ended
		ti.Ended = &ended
	}
	if manifest {
		ti.Manifest = json.RawMessage(t.Manifest)
	}
	if t.ResultBytes >= 0 {
		ti.Result = &agentapi.ResultInfo{Bytes: t.ResultBytes, SHA256: t.ResultSHA256}
	}
	for _, r := range reqs {
		if r.Status != ReqPending {
			continue
		}
		p := agentapi.PendingInfo{RequestID: r.ID, Kind: r.Kind, Expires: r.Expires, Summary: r.Body.Summary, Questions: r.Body.Questions}
		if len(r.Body.Detail) > 0 {
			p.Detail = r.Body.Detail
		}
		for _, d := range r.Body.Decisions {
			var v any
			if json.Unmarshal(d, &v) != nil {
				continue
			}
			s, isString := v.(string)
			p.Decisions = append(p.Decisions, agentapi.Decision{Value: v, Known: isString && knownDecisions[s]})
		}
		ti.Pending = append(ti.Pending, p)
	}
	return ti
}

func (e *Engine) submitOp(ctx context.Context, c *ops.Call, a agentapi.SubmitArgs) (agentapi.SubmitResult, error) {
	c.Target(a.Workdir, a.Cwd)
	c.Detail("runtime", a.Runtime)
	c.Detail("access", a.Access)
	if err := e.o.Files.CheckShownDir(c, "cwd", a.Workdir, a.Cwd); err != nil {
		return agentapi.SubmitResult{}, err
	}
	t, existed, err := e.Submit(ctx, a)
	if err != nil {
		return agentapi.SubmitResult{}, err
	}
	c.Detail("task_id", t.ID)
	reqs, _ := e.store.Requests(t.ID, true)
	return agentapi.SubmitResult{TaskInfo: e.info(t, reqs, false), Existing: existed}, nil
}

func init() {
	ops.AddDescribed(&agentOps, spec(agentapi.OpGetTask, "Get agent task",
		"A task's state, reason, correlation ids, pending approvals and questions (with the decisions offered), and result size.",
		ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Engine).describeGet, (*Engine).getOp)
}

// describeGet describes get_agent_task.
func (*Engine) describeGet(a agentapi.GetArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, "", nil), nil
}

func (e *Engine) getOp(_ context.Context, c *ops.Call, a agentapi.GetArgs) (agentapi.TaskInfo, error) {
	c.Detail("task_id", a.TaskID)
	t, reqs, err := e.Get(a.TaskID)
	if err != nil {
		return agentapi.TaskInfo{}, err
	}
	c.Target(t.Workdir)
	return e.info(t, reqs, a.IncludeManifest), nil
}

func init() {
	ops.AddDescribed(&agentOps, spec(agentapi.OpReadTaskEvents, "Read agent task events",
		"A page of a task's events in order (items, approvals, questions, turns, state changes), from a cursor.",
		ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Engine).describeEvents, (*Engine).eventsOp)
}

// describeEvents describes read_agent_task_events.
func (*Engine) describeEvents(a agentapi.EventsArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, "", nil), nil
}

func (e *Engine) eventsOp(_ context.Context, c *ops.Call, a agentapi.EventsArgs) (agentapi.EventsResult, error) {
	c.Detail("task_id", a.TaskID)
	evs, t, err := e.Events(a.TaskID, a.AfterSeq, a.MaxEvents)
	if err != nil {
		return agentapi.EventsResult{}, err
	}
	next := a.AfterSeq
	if len(evs) > 0 {
		next = evs[len(evs)-1].Seq
	}
	return agentapi.EventsResult{Events: evs, NextAfterSeq: next, More: next < t.LastSeq, Status: string(t.Status), Terminal: t.Status.Terminal()}, nil
}

func init() {
	ops.AddDescribed(&agentOps, spec(agentapi.OpReadTaskResult, "Read agent task result",
		"A chunk of a completed task's final answer, from a byte offset; chunks end on UTF-8 boundaries.",
		ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Engine).describeResult, (*Engine).resultOp)
}

// describeResult describes read_agent_task_result.
func (*Engine) describeResult(a agentapi.ResultArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, "", nil), nil
}

func (e *Engine) resultOp(_ context.Context, c *ops.Call, a agentapi.ResultArgs) (agentapi.ResultChunk, error) {
	c.Detail("task_id", a.TaskID)
	b, next, t, err := e.Result(a.TaskID, a.Offset, a.MaxBytes)
	if err != nil {
		return agentapi.ResultChunk{}, err
	}
	c.AddBytes(int64(len(b)))
	return agentapi.ResultChunk{TaskID: t.ID, Text: string(b), Offset: a.Offset, NextOffset: next, EOF: next >= t.ResultBytes,
		TotalBytes: t.ResultBytes, SHA256: t.ResultSHA256}, nil
}

func init() {
	ops.AddDescribed(&agentOps, spec(agentapi.OpRespondApproval, "Respond to agent approval",
		"Answer a pending approval with one of the decisions the runtime offered, passed back exactly as offered.",
		ops.Spec{Destructive: true}), (*Engine).describeApproval, (*Engine).approvalOp)
}

// describeApproval describes respond_agent_approval: the decision sent.
func (*Engine) describeApproval(a agentapi.ApprovalArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, a.RequestID, map[string]any{"decision": a.Decision}), nil
}

func init() {
	ops.AddDescribed(&agentOps, spec(agentapi.OpAnswerQuestion, "Answer agent question",
		"Answer a pending question of a task: every question, by id.",
		ops.Spec{}), (*Engine).describeQuestion, (*Engine).questionOp)
}

// describeQuestion describes answer_agent_question: the answers sent.
func (*Engine) describeQuestion(a agentapi.QuestionArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, a.RequestID, map[string]any{"answers": a.Answers}), nil
}

func init() {
	ops.AddDescribed(&agentOps, spec(agentapi.OpSendMessage, "Send agent message",
		"Steer a task's running turn with more input, or queue a follow-up turn.",
		ops.Spec{}), (*Engine).describeMessage, (*Engine).messageOp)
}

// describeMessage describes send_agent_message: the text sent.
func (*Engine) describeMessage(a agentapi.MessageArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, "", map[string]any{"text": a.Text}), nil
}

func (e *Engine) taskAfter(id string) (agentapi.TaskInfo, error) {
	t, reqs, err := e.Get(id)
	if err != nil {
		return agentapi.TaskInfo{}, err
	}
	return e.info(t, reqs, false), nil
}

func (e *Engine) approvalOp(_ context.Context, c *ops.Call, a agentapi.ApprovalArgs) (agentapi.TaskInfo, error) {
	c.Detail("task_id", a.TaskID)
	c.Detail("request_id", a.RequestID)
	if err := e.Respond(a.TaskID, a.RequestID, a.Decision); err != nil {
		return agentapi.TaskInfo{}, err
	}
	return e.taskAfter(a.TaskID)
}

func (e *Engine) questionOp(_ context.Context, c *ops.Call, a agentapi.QuestionArgs) (agentapi.TaskInfo, error) {
	c.Detail("task_id", a.TaskID)
	c.Detail("request_id", a.RequestID)
	if err := e.Answer(a.TaskID, a.RequestID, a.Answers); err != nil {
		return agentapi.TaskInfo{}, err
	}
	return e.taskAfter(a.TaskID)
}

func (e *Engine) messageOp(_ context.Context, c *ops.Call, a agentapi.MessageArgs) (agentapi.TaskInfo, error) {
	c.Detail("task_id", a.TaskID)
	mode := a.Mode
	if mode == "" {
		mode = agentapi.MessageSteer
	}
	c.Detail("mode", mode)
	if err := e.Send(a.TaskID, a.Text, mode); err != nil {
		return agentapi.TaskInfo{}, err
	}
	return e.taskAfter(a.TaskID)
}

func (e *Engine) cancelOp(_ context.Context, c *ops.Call, a agentapi.TaskArgs) (agentapi.TaskInfo, error) {
	c.Detail("task_id", a.TaskID)
	if _, err := e.Cancel(a.TaskID); err != nil {
		return agentapi.TaskInfo{}, err
	}
	return e.taskAfter(a.TaskID)
}

func init() {
	ops.AddDescribed(&agentOps, spec(agentapi.OpListRuntimes, "List agent runtimes",
		"List local agent runtimes (Codex, Claude Code, Qoder...) with their readiness: installed, version, authenticated where it can be checked read-only, and why one is not ready.",
		ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Engine).describeRuntimes, (*Engine).runtimesOp)
}

// describeRuntimes describes list_agent_runtimes.
func (*Engine) describeRuntimes(_ agentapi.RuntimesArgs, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

func (e *Engine) runtimesOp(ctx context.Context, _ *ops.Call, _ agentapi.RuntimesArgs) (agentapi.RuntimesResult, error) {
	return agentapi.RuntimesResult{Runtimes: e.Runtimes(ctx)}, nil
}

func init() {
	ops.AddDescribed(&agentOps, spec(agentapi.OpListModels, "List agent models",
		"List the models a runtime offers, where it can discover them; supported=false otherwise (never a guessed list).",
		ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Engine).describeModels, (*Engine).modelsOp)
}

// describeModels describes list_agent_models.
func (*Engine) describeModels(a agentapi.ModelsArgs, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op + " " + a.Runtime}, nil
}

func (e *Engine) modelsOp(ctx context.Context, c *ops.Call, a agentapi.ModelsArgs) (agentapi.ModelsResult, error) {
	c.Detail("runtime", a.Runtime)
	models, err := e.Models(ctx, a.Runtime)
	if err == ErrModelsUnsupported {
		return agentapi.ModelsResult{Runtime: a.Runtime, Models: []agentapi.Model{}}, nil
	}
	if err != nil {
		return agentapi.ModelsResult{}, err
	}
	if models == nil {
		models = []agentapi.Model{}
	}
	return agentapi.ModelsResult{Runtime: a.Runtime, Supported: true, Models: models}, nil
}

// agentOps are the agent operations; each adds itself.
var agentOps ops.Group[*Engine]

// Register adds the ten agent operations to r. Call it only when agents
// are enabled and some workdir allows them.
func Register(r *ops.Registry, e *Engine) { agentOps.Register(r, e) }

// spec is an agent operation's spec: class agents, on every transport.
func spec(name, title, desc string, s ops.Spec) ops.Spec {
	s.Name, s.Title, s.Description = name, title, desc
	s.Capability, s.Class, s.Transports = ops.Agents, policy.Agents, ops.AllTransports
	return s
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// describeTask describes a request about a task: the task, the request
// answered, and what is sent to it.
func describeTask(dc policy.DescribeContext, taskID, requestID string, sent map[string]any) policy.Action {
	var act policy.Action
	act.Add("Task", taskID)
	act.Add("Request", requestID)
	for _, k := range []string{"message", "text", "decision", "answers"} {
		if v, ok := sent[k]; ok {
			act.Add(k, textsafe.Clip(policy.Compact(v), 4096))
		}
	}
	act.Summary = fmt.Sprintf("%s for task %s", dc.Op, taskID)
	return act
}

// Specs are the specs of the operations Register adds, for a registry that
// names them disabled when the local user has not enabled them.
func Specs() []ops.Spec { return agentOps.Specs() }
