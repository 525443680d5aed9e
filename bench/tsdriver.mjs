// The benchmark's TypeScript-SDK client: one MCP client session, driven by
// the Go harness (bench/client_ts.go) over this process's stdin/stdout.
//
// Usage: node tsdriver.mjs <node_modules holding @modelcontextprotocol/sdk>
//
// Requests and replies are JSON lines. Every reply carries "ns", the time
// the SDK call itself took, measured here, so the harness can leave out the
// relay between itself and this process:
//
//   {"id":1,"op":"start","command":[...],"env":{...},"cwd":"...","stderr":"ignore"}
//       -> {"id":1,"ns":N,"pid":P}            spawn + initialize (client.connect)
//   {"id":2,"op":"list_tools"}
//       -> {"id":2,"ns":N,"tools":[{"name":..,"inputSchema":{..}}]}
//   {"id":3,"op":"call","tool":"read_file","args":{..},"text":true,"timeout_ms":150000}
//       -> {"id":3,"ns":N,"isError":false,"bytes":B,"text":".."}   text only when asked;
//          B is the size of the result's content array as JSON (UTF-8)
//   {"id":4,"op":"close"} -> {"id":4,"ns":N}, then exit
//
// A failed request replies {"id":..,"error":".."}.
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";

const nodeModules = process.argv[2];
if (!nodeModules) {
  process.stderr.write("usage: node tsdriver.mjs <node_modules>\n");
  process.exit(2);
}
// The SDK is resolved from the benchmark's pinned node_modules, not from
// wherever this file happens to be.
const require = createRequire(path.join(nodeModules, "noop.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

// The SDK's stdio transport caps a message at 10 MiB by default; a 10 MiB
// file read (or a 10,000-entry listing) can be larger from any server, so
// the cap is raised as the Go client's is.
const maxBufferSize = 1 << 30;

let client;
let transport;

function reply(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

// resultText is what the Go harness's checks look at: the text blocks
// joined, or the structured content as JSON when there is no text.
function resultText(res) {
  let t = "";
  for (const c of res.content ?? []) {
    if (c.type === "text") t += c.text;
  }
  if (t === "" && res.structuredContent !== undefined) t = JSON.stringify(res.structuredContent);
  return t;
}

async function handle(req) {
  const t0 = process.hrtime.bigint();
  const ns = () => Number(process.hrtime.bigint() - t0);
  switch (req.op) {
    case "start": {
      transport = new StdioClientTransport({
        command: req.command[0],
        args: req.command.slice(1),
        env: req.env,
        cwd: req.cwd,
        stderr: req.stderr ?? "ignore",
        maxBufferSize,
      });
      client = new Client({ name: "hostlink-bench", version: "0.1.0" });
      await client.connect(transport);
      return { ns: ns(), pid: transport.pid };
    }
    case "list_tools": {
      const res = await client.listTools();
      const el = ns();
      return { ns: el, tools: res.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema })) };
    }
    case "call": {
      const timeout = req.timeout_ms ?? 150000;
      const res = await client.callTool({ name: req.tool, arguments: req.args ?? {} }, undefined, {
        timeout,
        maxTotalTimeout: timeout,
      });
      const el = ns();
      const out = { ns: el, isError: !!res.isError };
      if (req.text || res.isError) out.text = resultText(res);
      out.images = (res.content ?? []).filter((c) => c.type === "image").length;
      out.bytes = Buffer.byteLength(JSON.stringify(res.content ?? []));
      return out;
    }
    case "close": {
      await client?.close();
      return { ns: ns() };
    }
  }
  throw new Error(`unknown op ${req.op}`);
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", async (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    reply({ id: 0, error: `bad request: ${e.message}` });
    return;
  }
  try {
    reply({ id: req.id, ...(await handle(req)) });
  } catch (e) {
    reply({ id: req.id, error: e?.message ?? String(e) });
  }
  if (req.op === "close") process.exit(0);
});
rl.on("close", () => process.exit(0));
