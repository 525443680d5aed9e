// A stdio client of `hostlink mcp` with the official MCP TypeScript SDK
// that declares the elicitation capability and answers hostlink's
// elicitation/create itself, as a client application's own prompt would.
// Usage: node mcp_elicit.mjs <hostlink-binary> <path> <content> <answer>
// answer: "approve" (accept, approve = true), "decline", or "none" (does
// not declare the capability). Prints one JSON object a line:
// {"event":"elicited","message":…,"schema":…} for each elicitation, then
// {"event":"result",…} or {"event":"error",…}. A call answered
// APPROVAL_PENDING is sent again, as the error says, at most 20 times.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [bin, path, content, answer] = process.argv.slice(2);
const out = (o) => console.log(JSON.stringify(o));

const capabilities = answer === "none" ? {} : { elicitation: {} };
const client = new Client({ name: "hostlink-elicit-e2e", version: "1.0.0" }, { capabilities });
if (answer !== "none") {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out({ event: "elicited", message: req.params.message, schema: req.params.requestedSchema });
    if (answer === "approve") return { action: "accept", content: { approve: true } };
    return { action: "decline" };
  });
}
const transport = new StdioClientTransport({ command: bin, args: ["mcp"], env: process.env, stderr: "inherit" });
await client.connect(transport);
out({ event: "connected" });
for (let i = 0; ; i++) {
  const res = await client.callTool({ name: "write_file", arguments: { path, content } }, undefined, { timeout: 300000 });
  if (res.isError) {
    const error = JSON.parse(res.content[0].text).error;
    if (error.code === "APPROVAL_PENDING" && i < 20) {
      out({ event: "pending", error });
      continue;
    }
    out({ event: "error", error });
    break;
  }
  out({ event: "result", result: res.structuredContent });
  break;
}
await client.close();
