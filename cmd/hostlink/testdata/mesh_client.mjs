// README's "Many machines" walk-through with the official MCP TypeScript
// SDK client, against the hub's gateway over Streamable HTTP with its
// bearer token (README's client configuration).
// Usage: node mesh_client.mjs <url> <token> <machines, comma-separated> <write machine> <path> <content>
// Prints {"event":"writing"} when the write is sent (it waits for its
// machine's user), then one JSON object with what it saw; exits 1 on the
// first mismatch.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, names, writeOn, path, content] = process.argv.slice(2);
const machines = names.split(",");
const seen = { steps: [] };

function fail(msg) {
  seen.error = msg;
  console.log(JSON.stringify(seen));
  process.exit(1);
}
function expect(cond, msg) {
  if (!cond) fail(msg);
}

const client = new Client({ name: "hostlink-mesh-e2e", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
}));

// Every result is text whose first line is JSON (a read's content follows
// it); an error is {"error":{code,…}}.
async function call(name, args) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 300000 });
  seen.steps.push(name);
  const text = res.content[0].text;
  const nl = text.indexOf("\n");
  const head = JSON.parse(nl < 0 ? text : text.slice(0, nl));
  if (res.isError) return { error: head.error };
  if (nl >= 0) head.text = text.slice(nl + 1);
  return head;
}

const { tools } = await client.listTools();
const toolNames = tools.map((t) => t.name);
for (const want of ["list_machines", "fanout", "read_file", "write_file", "search_text"]) {
  expect(toolNames.includes(want), `tool ${want} missing`);
}
expect(tools.find((t) => t.name === "read_file").inputSchema.required.includes("machine"), "read_file does not require machine");
expect(!toolNames.some((n) => n.includes("approv") && n !== "respond_agent_approval"), "the gateway lists a decision tool");

const listed = await call("list_machines", {});
expect(!listed.error, `list_machines: ${JSON.stringify(listed)}`);
seen.online = listed.machines.filter((m) => m.online).map((m) => m.name).sort();
for (const m of machines) expect(seen.online.includes(m), `${m} not online: ${JSON.stringify(listed)}`);

seen.read = {};
for (const m of machines) {
  const r = await call("read_file", { machine: m, path: "f.txt" });
  expect(!r.error, `read_file on ${m}: ${JSON.stringify(r)}`);
  seen.read[m] = r.text;
}

const f = await call("fanout", { op: "search_text", args: { query: "hello" }, selector: "team=a" });
expect(!f.error, `fanout: ${JSON.stringify(f)}`);
seen.fanout = { ok: f.ok, failed: f.failed, machines: f.results.map((r) => r.name).sort() };

// The write waits on its machine until its user approves there; an
// APPROVAL_PENDING (the machine's wait ran out first) is sent again, as
// the error says.
console.log(JSON.stringify({ event: "writing" }));
const args = { machine: writeOn, path, content, idempotency_key: `ts-${process.pid}` };
for (let i = 0; ; i++) {
  const w = await call("write_file", args);
  if (w.error?.code === "APPROVAL_PENDING" && i < 10) {
    seen.pending = w.error.details.decide_on;
    continue;
  }
  expect(!w.error, `write_file on ${writeOn}: ${JSON.stringify(w)}`);
  seen.written = w.bytes_written;
  break;
}

await client.close();
seen.ok = true;
console.log(JSON.stringify(seen));
process.exit(0);
