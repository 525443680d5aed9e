// End-to-end check of hostlink's agent operations with the official MCP
// TypeScript SDK client, against `hostlink serve` running the fake runtime.
// Usage: node mcp_agent_client.mjs <url> <token>
// Prints one JSON object with what it saw; exits 1 on the first mismatch.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const seen = { steps: [] };
function fail(msg) {
  seen.error = msg;
  console.log(JSON.stringify(seen));
  process.exit(1);
}
function expect(cond, msg) {
  if (!cond) fail(msg);
}

const client = new Client({ name: "hostlink-agent-e2e", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
}));

async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  seen.steps.push(name);
  if (res.isError) {
    return { error: JSON.parse(res.content[0].text).error };
  }
  expect(res.structuredContent, `${name}: no structured content`);
  return res.structuredContent;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(id, what, cond) {
  for (let i = 0; i < 3000; i++) {
    const t = await call("get_agent_task", { task_id: id });
    if (cond(t)) return t;
    await sleep(10);
  }
  fail(`task ${id}: no ${what}`);
}

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
for (const want of ["list_agent_runtimes", "list_agent_models", "submit_agent_task", "get_agent_task",
  "read_agent_task_events", "read_agent_task_result", "respond_agent_approval", "answer_agent_question",
  "send_agent_message", "cancel_agent_task"]) {
  expect(names.includes(want), `tool ${want} missing`);
}

const rts = await call("list_agent_runtimes", {});
seen.runtimes = rts.runtimes.map((r) => `${r.name}:${r.ready}`);
expect(rts.runtimes.some((r) => r.name === "fake" && r.ready), "the fake runtime is not ready");

const script = "say hello\napprove make test\nask go on?\nsleep 60000\nresult finished";
const submit = { runtime: "fake", workdir: "a", prompt: script, access: "workspace-write", idempotency_key: "ts-1" };
const task = await call("submit_agent_task", submit);
expect(task.task_id && !task.existing, `submit: ${JSON.stringify(task)}`);
const id = task.task_id;
const again = await call("submit_agent_task", submit);
expect(again.task_id === id && again.existing, "idempotent resubmit made a new task");
const conflict = await call("submit_agent_task", { ...submit, prompt: "say else" });
expect(conflict.error?.code === "IDEMPOTENCY_CONFLICT", `changed resubmit: ${JSON.stringify(conflict)}`);

let t = await until(id, "approval", (t) => t.pending.length > 0);
expect(t.status === "waiting_approval", `status ${t.status}`);
const busy = await call("write_file", { workdir: "a", path: "x.txt", content: "x" });
expect(busy.error?.code === "WORKDIR_BUSY", `write_file during the task: ${JSON.stringify(busy)}`);
const approval = t.pending[0];
const ok = await call("respond_agent_approval", { task_id: id, request_id: approval.request_id, decision: "accept" });
expect(!ok.error, `respond: ${JSON.stringify(ok)}`);
const twice = await call("respond_agent_approval", { task_id: id, request_id: approval.request_id, decision: "accept" });
expect(twice.error?.code === "REQUEST_ALREADY_RESOLVED", `answering twice: ${JSON.stringify(twice)}`);

t = await until(id, "question", (t) => t.pending.length > 0 && t.pending[0].kind === "question");
const q = t.pending[0];
const answered = await call("answer_agent_question", { task_id: id, request_id: q.request_id, answers: { [q.questions[0].id]: ["yes"] } });
expect(!answered.error, `answer: ${JSON.stringify(answered)}`);

await until(id, "a running turn", (t) => t.status === "running");
for (let i = 0; ; i++) {
  const steer = await call("send_agent_message", { task_id: id, text: "wrap up", mode: "steer" });
  if (!steer.error) break;
  expect(i < 100, `steer: ${JSON.stringify(steer)}`);
  await sleep(10);
}
t = await until(id, "end", (t) => t.terminal);
expect(t.status === "completed", `final status ${t.status}: ${t.reason}`);
const result = await call("read_agent_task_result", { task_id: id });
expect(result.text === "finished" && result.eof, `result ${JSON.stringify(result)}`);

let after = 0;
const types = [];
for (;;) {
  const page = await call("read_agent_task_events", { task_id: id, after_seq: after, max_events: 10 });
  for (const ev of page.events) {
    expect(ev.seq === after + 1, `event seq ${ev.seq} after ${after}`);
    after = ev.seq;
    types.push(ev.type);
  }
  if (!page.more) break;
}
for (const want of ["approval.requested", "approval.resolved", "question.asked", "question.answered", "message.steered", "task.result"]) {
  expect(types.includes(want), `no ${want} event`);
}
seen.events = types.length;

// Cancel mid-turn.
const long = await call("submit_agent_task", { runtime: "fake", workdir: "a", prompt: "say working\nsleep 60000" });
await until(long.task_id, "a turn", (t) => t.turns === 1);
await call("cancel_agent_task", { task_id: long.task_id });
t = await until(long.task_id, "end", (t) => t.terminal);
expect(t.status === "cancelled", `cancelled task is ${t.status}`);

seen.ok = true;
console.log(JSON.stringify(seen));
await client.close();
