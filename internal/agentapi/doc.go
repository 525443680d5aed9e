// Package agentapi holds the agent operations' names and their request
// and response types, types only: what internal/agent implements, and
// what a transport, doctor or the CLI needs to submit and follow a task
// without importing the engine. The plain data the runtime adapters
// report and the responses carry (a runtime's Readiness, its Models, a
// Question, the Event envelope) are declared here too, and the adapters
// use these names. It is a leaf (see TestTypesPackagesAreLeaves); how an
// operation is described to the policy is registered with it, in
// internal/agent.
package agentapi

// The agent operations' names, the same on every transport.
const (
	OpSubmitTask      = "submit_agent_task"
	OpCancelTask      = "cancel_agent_task"
	OpGetTask         = "get_agent_task"
	OpReadTaskEvents  = "read_agent_task_events"
	OpReadTaskResult  = "read_agent_task_result"
	OpRespondApproval = "respond_agent_approval"
	OpAnswerQuestion  = "answer_agent_question"
	OpSendMessage     = "send_agent_message"
	OpListRuntimes    = "list_agent_runtimes"
	OpListModels      = "list_agent_models"
)
