// A stdio client of `hostlink mcp` with the official MCP TypeScript SDK
// that makes one write_file, which the default policy holds for approval.
// Usage: node mcp_wait.mjs <hostlink-binary> <path> <content>
// Prints one JSON object a line as things happen: {"event":"progress",
// "message":…} for each progress notification, {"event":"pending",…} when
// the call answered APPROVAL_PENDING (it is then sent again, as the error
// says), and last {"event":"result",…} or {"event":"error",…}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, path, content] = process.argv.slice(2);
const out = (o) => console.log(JSON.stringify(o));

const client = new Client({ name: "hostlink-wait-e2e", version: "2.0.0" });
const transport = new StdioClientTransport({ command: bin, args: ["mcp"], env: process.env, stderr: "inherit" });
await client.connect(transport);
out({ event: "connected" });
for (;;) {
  const res = await client.callTool({ name: "write_file", arguments: { path, content } }, undefined, {
    onprogress: (p) => out({ event: "progress", message: p.message }),
    timeout: 300000,
  });
  if (res.isError) {
    const error = JSON.parse(res.content[0].text).error;
    if (error.code === "APPROVAL_PENDING") {
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
