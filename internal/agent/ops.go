package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"time"

	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// SubmitArgs is submit_agent_task's request.
type SubmitArgs struct {
	Runtime         string `json:"runtime" jsonschema:"runtime name, from list_agent_runtimes"`
	Workdir         string `json:"workdir" jsonschema:"workdir alias; its agent_mode must allow agents"`
	Cwd             string `json:"cwd,omitempty" jsonschema:"working directory relative to the workdir, / separated (default .)"`
	Prompt          string `json:"prompt"`
	Model           string `json:"model,omitempty" jsonschema:"model id from list_agent_models; default: the runtime's"`
	Access          string `json:"access,omitempty" enum:"read-only,workspace-write" jsonschema:"default read-only; workspace-write needs agent_mode workspace-write and holds the workdir's writer lease for each turn"`
	IdempotencyKey  string `json:"idempotency_key,omitempty" jsonschema:"the same key with the same request returns the first task; with a different request it is IDEMPOTENCY_CONFLICT"`
	ContinueTaskID  string `json:"continue_task_id,omitempty" jsonschema:"continue the runtime session of this finished task (same runtime and workdir): the runtime sees its history"`
	QueueIfNotReady bool   `json:"queue_if_not_ready,omitempty" jsonschema:"submit even if the runtime is not installed or not ready (otherwise RUNTIME_NOT_READY with the readiness reason)"`
}

func init() {
	ops.Add(&agentOps, spec("submit_agent_task", "Submit agent task",
		"Hand a prompt to a local agent runtime working in a workdir. Returns at once with the task; follow it with read_agent_task_events. An idempotency key makes resubmission safe.",
		ops.Spec{Destructive: true, Idempotent: true}), (*Engine).submitOp)
}

// Describe implements policy.Describer: the runtime, its access, where it
// works and the prompt.
func (a SubmitArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
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

// TaskArgs names a task.
type TaskArgs struct {
	TaskID string `json:"task_id"`
}

func init() {
	ops.Add(&agentOps, spec("cancel_agent_task", "Cancel agent task",
		"Stop a task: its turn is interrupted and the runtime ended; it becomes cancelled.",
		ops.Spec{NoAsk: true, Destructive: true, Idempotent: true}), (*Engine).cancelOp)
}

// Describe implements policy.Describer.
func (a TaskArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, "", nil), nil
}

// TaskInfo describes a task.
type TaskInfo struct {
	TaskID            string        `json:"task_id"`
	Status            string        `json:"status" enum:"queued,starting,running,waiting_approval,waiting_input,completed,failed,cancelled,interrupted"`
	Terminal          bool          `json:"terminal"`
	Reason            string        `json:"reason,omitempty" jsonschema:"why it failed, was cancelled or interrupted, or how it was reconciled"`
	Runtime           string        `json:"runtime"`
	Model             string        `json:"model,omitempty"`
	Workdir           string        `json:"workdir"`
	Cwd               string        `json:"cwd"`
	Access            string        `json:"access"`
	Created           time.Time     `json:"created"`
	Updated           time.Time     `json:"updated"`
	Ended             *time.Time    `json:"ended,omitempty"`
	SessionID         string        `json:"session_id,omitempty" jsonschema:"the runtime's session or thread id"`
	TurnID            string        `json:"turn_id,omitempty"`
	Turns             int           `json:"turns"`
	LastSeq           int64         `json:"last_seq" jsonschema:"sequence number of the newest event"`
	ManifestSHA256    string        `json:"manifest_sha256"`
	PolicyFingerprint string        `json:"policy_fingerprint"`
	Manifest          any           `json:"manifest,omitempty" jsonschema:"the execution manifest, as hashed into manifest_sha256"`
	Result            *ResultInfo   `json:"result,omitempty"`
	Pending           []PendingInfo `json:"pending" jsonschema:"approvals and questions waiting for an answer"`
}

// ResultInfo describes a task's stored result.
type ResultInfo struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// PendingInfo is an approval or question waiting for an answer.
type PendingInfo struct {
	RequestID string     `json:"request_id"`
	Kind      string     `json:"kind" enum:"approval,question"`
	Expires   time.Time  `json:"expires"`
	Summary   string     `json:"summary,omitempty"`
	Detail    any        `json:"detail,omitempty" jsonschema:"what the runtime says about the request: command, cwd, reason, diff..."`
	Decisions []Decision `json:"decisions,omitempty" jsonschema:"for an approval: the decisions the runtime offers; answer with one value exactly"`
	Questions []Question `json:"questions,omitempty"`
}

// Decision is one offered approval decision.
type Decision struct {
	Value any  `json:"value" jsonschema:"pass this back as decision, unchanged"`
	Known bool `json:"known" jsonschema:"false for a variant hostlink does not know; it is still offered as the runtime sent it"`
}

var knownDecisions = map[string]bool{"accept": true, "acceptForSession": true, "decline": true, "cancel": true}

func (e *Engine) info(t Task, reqs []StoredRequest, manifest bool) TaskInfo {
	ti := TaskInfo{TaskID: t.ID, Status: string(t.Status), Terminal: t.Status.Terminal(), Reason: t.Reason,
		Runtime: t.Runtime, Model: t.Model, Workdir: t.Workdir, Cwd: t.Cwd, Access: string(t.Access),
		Created: t.Created, Updated: t.Updated, SessionID: t.SessionID, TurnID: t.TurnID, Turns: t.Turns,
		LastSeq: t.LastSeq, ManifestSHA256: t.ManifestSHA256, PolicyFingerprint: t.PolicyFingerprint,
		Pending: []PendingInfo{}}
	if !t.Ended.IsZero() {
		ended := t.Ended
		ti.Ended = &ended
	}
	if manifest {
		ti.Manifest = json.RawMessage(t.Manifest)
	}
	if t.ResultBytes >= 0 {
		ti.Result = &ResultInfo{Bytes: t.ResultBytes, SHA256: t.ResultSHA256}
	}
	for _, r := range reqs {
		if r.Status != ReqPending {
			continue
		}
		p := PendingInfo{RequestID: r.ID, Kind: r.Kind, Expires: r.Expires, Summary: r.Body.Summary, Questions: r.Body.Questions}
		if len(r.Body.Detail) > 0 {
			p.Detail = r.Body.Detail
		}
		for _, d := range r.Body.Decisions {
			var v any
			if json.Unmarshal(d, &v) != nil {
				continue
			}
			s, isString := v.(string)
			p.Decisions = append(p.Decisions, Decision{Value: v, Known: isString && knownDecisions[s]})
		}
		ti.Pending = append(ti.Pending, p)
	}
	return ti
}

// SubmitResult is submit_agent_task's response.
type SubmitResult struct {
	TaskInfo
	Existing bool `json:"existing" jsonschema:"the idempotency key named an existing task, returned instead of a new one"`
}

func (e *Engine) submitOp(ctx context.Context, c *ops.Call, a SubmitArgs) (SubmitResult, error) {
	c.Target(a.Workdir, a.Cwd)
	c.Detail("runtime", a.Runtime)
	c.Detail("access", a.Access)
	if err := e.o.Files.CheckShownDir(c, "cwd", a.Workdir, a.Cwd); err != nil {
		return SubmitResult{}, err
	}
	t, existed, err := e.Submit(ctx, a)
	if err != nil {
		return SubmitResult{}, err
	}
	c.Detail("task_id", t.ID)
	reqs, _ := e.store.Requests(t.ID, true)
	return SubmitResult{TaskInfo: e.info(t, reqs, false), Existing: existed}, nil
}

// GetArgs is get_agent_task's request.
type GetArgs struct {
	TaskID          string `json:"task_id"`
	IncludeManifest bool   `json:"include_manifest,omitempty" jsonschema:"include the execution manifest (canonical JSON)"`
}

func init() {
	ops.Add(&agentOps, spec("get_agent_task", "Get agent task",
		"A task's state, reason, correlation ids, pending approvals and questions (with the decisions offered), and result size.",
		ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Engine).getOp)
}

// Describe implements policy.Describer.
func (a GetArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, "", nil), nil
}

func (e *Engine) getOp(_ context.Context, c *ops.Call, a GetArgs) (TaskInfo, error) {
	c.Detail("task_id", a.TaskID)
	t, reqs, err := e.Get(a.TaskID)
	if err != nil {
		return TaskInfo{}, err
	}
	c.Target(t.Workdir)
	return e.info(t, reqs, a.IncludeManifest), nil
}

// EventsArgs is read_agent_task_events' request.
type EventsArgs struct {
	TaskID    string `json:"task_id"`
	AfterSeq  int64  `json:"after_seq,omitempty" min:"0" max:"9007199254740991" jsonschema:"cursor: return events after this sequence number (0: from the start); pass next_after_seq"`
	MaxEvents int    `json:"max_events,omitempty" min:"0" max:"500" jsonschema:"page size, 1 to 500 (default 100)"`
}

func init() {
	ops.Add(&agentOps, spec("read_agent_task_events", "Read agent task events",
		"A page of a task's events in order (items, approvals, questions, turns, state changes), from a cursor.",
		ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Engine).eventsOp)
}

// Describe implements policy.Describer.
func (a EventsArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, "", nil), nil
}

// EventsResult is read_agent_task_events' response.
type EventsResult struct {
	Events       []Event `json:"events"`
	NextAfterSeq int64   `json:"next_after_seq"`
	More         bool    `json:"more" jsonschema:"more events are stored already"`
	Status       string  `json:"status"`
	Terminal     bool    `json:"terminal" jsonschema:"the task is finished: no more events will come once more is false"`
}

func (e *Engine) eventsOp(_ context.Context, c *ops.Call, a EventsArgs) (EventsResult, error) {
	c.Detail("task_id", a.TaskID)
	evs, t, err := e.Events(a.TaskID, a.AfterSeq, a.MaxEvents)
	if err != nil {
		return EventsResult{}, err
	}
	next := a.AfterSeq
	if len(evs) > 0 {
		next = evs[len(evs)-1].Seq
	}
	return EventsResult{Events: evs, NextAfterSeq: next, More: next < t.LastSeq, Status: string(t.Status), Terminal: t.Status.Terminal()}, nil
}

// ResultArgs is read_agent_task_result's request.
type ResultArgs struct {
	TaskID   string `json:"task_id"`
	Offset   int64  `json:"offset,omitempty" min:"0" max:"9007199254740991" jsonschema:"byte offset; pass next_offset from the previous chunk"`
	MaxBytes int    `json:"max_bytes,omitempty" min:"0" max:"1048576" jsonschema:"chunk size, up to 1 MiB (default 64 KiB); chunks end on UTF-8 character boundaries"`
}

func init() {
	ops.Add(&agentOps, spec("read_agent_task_result", "Read agent task result",
		"A chunk of a completed task's final answer, from a byte offset; chunks end on UTF-8 boundaries.",
		ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Engine).resultOp)
}

// Describe implements policy.Describer.
func (a ResultArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, "", nil), nil
}

// ResultChunk is read_agent_task_result's response.
type ResultChunk struct {
	TaskID     string `json:"task_id"`
	Text       string `json:"text"`
	Offset     int64  `json:"offset"`
	NextOffset int64  `json:"next_offset"`
	EOF        bool   `json:"eof"`
	TotalBytes int64  `json:"total_bytes"`
	SHA256     string `json:"sha256" jsonschema:"of the whole result"`
}

func (e *Engine) resultOp(_ context.Context, c *ops.Call, a ResultArgs) (ResultChunk, error) {
	c.Detail("task_id", a.TaskID)
	b, next, t, err := e.Result(a.TaskID, a.Offset, a.MaxBytes)
	if err != nil {
		return ResultChunk{}, err
	}
	c.AddBytes(int64(len(b)))
	return ResultChunk{TaskID: t.ID, Text: string(b), Offset: a.Offset, NextOffset: next, EOF: next >= t.ResultBytes,
		TotalBytes: t.ResultBytes, SHA256: t.ResultSHA256}, nil
}

// ApprovalArgs is respond_agent_approval's request.
type ApprovalArgs struct {
	TaskID    string `json:"task_id"`
	RequestID string `json:"request_id"`
	Decision  any    `json:"decision" jsonschema:"one of the request's offered decisions, exactly as offered (a string such as accept, or an object)"`
}

func init() {
	ops.Add(&agentOps, spec("respond_agent_approval", "Respond to agent approval",
		"Answer a pending approval with one of the decisions the runtime offered, passed back exactly as offered.",
		ops.Spec{Destructive: true}), (*Engine).approvalOp)
}

// Describe implements policy.Describer: the decision sent.
func (a ApprovalArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, a.RequestID, map[string]any{"decision": a.Decision}), nil
}

// QuestionArgs is answer_agent_question's request.
type QuestionArgs struct {
	TaskID    string              `json:"task_id"`
	RequestID string              `json:"request_id"`
	Answers   map[string][]string `json:"answers" jsonschema:"question id → answers (options, or free text where allowed)"`
}

func init() {
	ops.Add(&agentOps, spec("answer_agent_question", "Answer agent question",
		"Answer a pending question of a task: every question, by id.",
		ops.Spec{}), (*Engine).questionOp)
}

// Describe implements policy.Describer: the answers sent.
func (a QuestionArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, a.RequestID, map[string]any{"answers": a.Answers}), nil
}

// MessageArgs is send_agent_message's request.
type MessageArgs struct {
	TaskID string `json:"task_id"`
	Text   string `json:"text"`
	Mode   string `json:"mode,omitempty" enum:"steer,follow_up" jsonschema:"steer adds to the running turn; follow_up runs as the next turn after it (default steer)"`
}

func init() {
	ops.Add(&agentOps, spec("send_agent_message", "Send agent message",
		"Steer a task's running turn with more input, or queue a follow-up turn.",
		ops.Spec{}), (*Engine).messageOp)
}

// Describe implements policy.Describer: the text sent.
func (a MessageArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeTask(dc, a.TaskID, "", map[string]any{"text": a.Text}), nil
}

func (e *Engine) taskAfter(id string) (TaskInfo, error) {
	t, reqs, err := e.Get(id)
	if err != nil {
		return TaskInfo{}, err
	}
	return e.info(t, reqs, false), nil
}

func (e *Engine) approvalOp(_ context.Context, c *ops.Call, a ApprovalArgs) (TaskInfo, error) {
	c.Detail("task_id", a.TaskID)
	c.Detail("request_id", a.RequestID)
	if err := e.Respond(a.TaskID, a.RequestID, a.Decision); err != nil {
		return TaskInfo{}, err
	}
	return e.taskAfter(a.TaskID)
}

func (e *Engine) questionOp(_ context.Context, c *ops.Call, a QuestionArgs) (TaskInfo, error) {
	c.Detail("task_id", a.TaskID)
	c.Detail("request_id", a.RequestID)
	if err := e.Answer(a.TaskID, a.RequestID, a.Answers); err != nil {
		return TaskInfo{}, err
	}
	return e.taskAfter(a.TaskID)
}

func (e *Engine) messageOp(_ context.Context, c *ops.Call, a MessageArgs) (TaskInfo, error) {
	c.Detail("task_id", a.TaskID)
	mode := a.Mode
	if mode == "" {
		mode = MessageSteer
	}
	c.Detail("mode", mode)
	if err := e.Send(a.TaskID, a.Text, mode); err != nil {
		return TaskInfo{}, err
	}
	return e.taskAfter(a.TaskID)
}

func (e *Engine) cancelOp(_ context.Context, c *ops.Call, a TaskArgs) (TaskInfo, error) {
	c.Detail("task_id", a.TaskID)
	if _, err := e.Cancel(a.TaskID); err != nil {
		return TaskInfo{}, err
	}
	return e.taskAfter(a.TaskID)
}

// RuntimesArgs is list_agent_runtimes' (empty) request.
type RuntimesArgs struct{}

func init() {
	ops.Add(&agentOps, spec("list_agent_runtimes", "List agent runtimes",
		"List local agent runtimes (Codex, Claude Code, Qoder...) with their readiness: installed, version, authenticated where it can be checked read-only, and why one is not ready.",
		ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Engine).runtimesOp)
}

// Describe implements policy.Describer.
func (RuntimesArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

// RuntimeInfo is one runtime's readiness.
type RuntimeInfo struct {
	Name    string `json:"name"`
	Allowed bool   `json:"allowed" jsonschema:"agents.runtimes allows it"`
	Readiness
}

// RuntimesResult is list_agent_runtimes' response.
type RuntimesResult struct {
	Runtimes []RuntimeInfo `json:"runtimes"`
}

func (e *Engine) runtimesOp(ctx context.Context, _ *ops.Call, _ RuntimesArgs) (RuntimesResult, error) {
	return RuntimesResult{Runtimes: e.Runtimes(ctx)}, nil
}

// ModelsArgs is list_agent_models' request.
type ModelsArgs struct {
	Runtime string `json:"runtime"`
}

func init() {
	ops.Add(&agentOps, spec("list_agent_models", "List agent models",
		"List the models a runtime offers, where it can discover them; supported=false otherwise (never a guessed list).",
		ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Engine).modelsOp)
}

// Describe implements policy.Describer.
func (a ModelsArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op + " " + a.Runtime}, nil
}

// ModelsResult is list_agent_models' response.
type ModelsResult struct {
	Runtime   string  `json:"runtime"`
	Supported bool    `json:"supported" jsonschema:"false: the runtime cannot list its models (no list is guessed)"`
	Models    []Model `json:"models"`
}

func (e *Engine) modelsOp(ctx context.Context, c *ops.Call, a ModelsArgs) (ModelsResult, error) {
	c.Detail("runtime", a.Runtime)
	models, err := e.Models(ctx, a.Runtime)
	if err == ErrModelsUnsupported {
		return ModelsResult{Runtime: a.Runtime, Models: []Model{}}, nil
	}
	if err != nil {
		return ModelsResult{}, err
	}
	if models == nil {
		models = []Model{}
	}
	return ModelsResult{Runtime: a.Runtime, Supported: true, Models: models}, nil
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
