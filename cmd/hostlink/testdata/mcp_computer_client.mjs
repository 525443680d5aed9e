// End-to-end check of hostlink's computer tools with the official MCP
// TypeScript SDK client over stdio.
// Usage: node mcp_computer_client.mjs <hostlink-binary> <width> <height>
// Prints one JSON object with what it saw; exits 1 on the first mismatch.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, width, height] = process.argv.slice(2);
const seen = { steps: [] };
function fail(msg) {
  seen.error = msg;
  console.log(JSON.stringify(seen));
  process.exit(1);
}
function expect(cond, msg) {
  if (!cond) fail(msg);
}

const client = new Client({ name: "hostlink-computer-e2e", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: bin, args: ["mcp"], env: process.env, stderr: "inherit" }));
const { tools } = await client.listTools();
for (const want of ["computer_desktops", "computer_observe", "computer_act"]) {
  expect(tools.some((t) => t.name === want), `tool ${want} missing`);
}

// The SDK validates structuredContent against each tool's output schema.
async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  seen.steps.push(name);
  expect(!res.isError, `${name}: ${res.content?.[0]?.text}`);
  return res;
}

// A PNG's size from its IHDR chunk.
function pngSize(b) {
  expect(b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), "not a PNG");
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

const desk = (await call("computer_desktops", { windows: true })).structuredContent;
expect(desk.desktops.length === 1 && desk.desktops[0].operations.computer_act.ready, "desktop not ready");
seen.windows = (desk.desktops[0].windows ?? []).map((w) => w.title);

let res = await call("computer_observe", {});
const obs = res.structuredContent;
const img = res.content.find((c) => c.type === "image");
expect(img && img.mimeType === "image/png", "no PNG image content");
expect(!res.content[0].text.includes(img.data.slice(0, 32)), "image data inside the JSON text");
const png = Buffer.from(img.data, "base64");
seen.png_bytes = png.length;
seen.png_size = pngSize(png);
expect(seen.png_size[0] === Number(width) && seen.png_size[1] === Number(height), `PNG is ${seen.png_size}`);
expect(png.length === obs.image.bytes, "image bytes differ from the JSON's count");

res = await call("computer_act", { observation_id: obs.observation_id, action: "move", x: 12, y: 34, settle_ms: 0 });
const act = res.structuredContent;
seen.receipt = act.receipt.status;
seen.cursor = act.observation?.cursor;
expect(res.content.some((c) => c.type === "image"), "act returned no fresh image");

const again = await client.callTool({ name: "computer_act", arguments: { observation_id: obs.observation_id, action: "move", x: 1, y: 1 } });
expect(again.isError, "a consumed reference was accepted");
seen.reuse_code = JSON.parse(again.content[0].text).error.code;

await client.close();
seen.ok = true;
console.log(JSON.stringify(seen));
