// End-to-end check of hostlink with the official MCP TypeScript SDK client.
// Usage: node mcp_client.mjs stdio <hostlink-binary> <workspace>
//        node mcp_client.mjs http <url> <token> <workspace>
// Prints one JSON object with what it saw; exits 1 on the first mismatch.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, ...rest] = process.argv.slice(2);
const seen = { mode, steps: [] };
// Each run works in its own directory so runs can share a workspace.
const d = `e2e-${mode}-${process.pid}`;
seen.dir = d;

function fail(msg) {
  seen.error = msg;
  console.log(JSON.stringify(seen));
  process.exit(1);
}
function expect(cond, msg) {
  if (!cond) fail(msg);
}

const client = new Client({ name: "hostlink-e2e", version: "1.0.0" });
let transport;
if (mode === "stdio") {
  const [bin] = rest;
  transport = new StdioClientTransport({ command: bin, args: ["mcp"], env: process.env, stderr: "inherit" });
} else {
  const [url, token] = rest;
  transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
}
await client.connect(transport);
// Progress notifications as they arrive on the wire. The SDK hands
// notifications to onprogress in a later microtask than the response that
// follows them in the same read, and drops them once the response is in, so
// counting at the transport shows what hostlink sent, in order, before the
// result.
let wireProgress = 0;
const onmessage = transport.onmessage;
transport.onmessage = (msg, extra) => {
  if (msg.method === "notifications/progress") wireProgress++;
  onmessage(msg, extra);
};

async function call(name, args, opts) {
  const res = await client.callTool({ name, arguments: args }, undefined, opts);
  seen.steps.push(name);
  if (res.isError) {
    return { error: JSON.parse(res.content[0].text).error };
  }
  if (name === "read_file") {
    // A read is text only: its facts as one JSON line, then the content.
    expect(!res.structuredContent && res.content.length === 1, "read_file: not text only");
    const text = res.content[0].text;
    const nl = text.indexOf("\n");
    return { ...JSON.parse(text.slice(0, nl)), content: text.slice(nl + 1) };
  }
  if (name === "list_directory" || name === "find_files") {
    // A listing is text only: a head line of JSON, then one line per entry.
    expect(!res.structuredContent && res.content.length === 1, `${name}: not text only`);
    const text = res.content[0].text;
    const nl = text.indexOf("\n");
    return { ...JSON.parse(text.slice(0, nl)), lines: text.slice(nl + 1).split("\n").filter((l) => l !== "") };
  }
  expect(res.structuredContent, `${name}: no structured content`);
  return res.structuredContent;
}

const { tools } = await client.listTools();
seen.tools = tools.map((t) => t.name).sort();
for (const want of ["list_workdirs", "read_file", "write_file", "edit_file", "stat", "list_directory",
  "create_directory", "delete", "move", "find_files", "search_text"]) {
  expect(seen.tools.includes(want), `tool ${want} missing`);
}
const readTool = tools.find((t) => t.name === "read_file");
expect(readTool.annotations?.readOnlyHint === true, "read_file not annotated read-only");
expect(tools.find((t) => t.name === "delete").annotations?.destructiveHint === true, "delete not destructive");
expect(readTool.outputSchema === undefined, "read_file lists an output schema, but its result is text only");
for (const name of ["list_directory", "find_files"]) {
  expect(tools.find((t) => t.name === name).outputSchema === undefined, `${name} lists an output schema, but its result is text only`);
}

const wds = await call("list_workdirs", {});
expect(wds.workdirs.length >= 1 && wds.workdirs[0].alias === "workspace", "no workspace workdir");

const text = "héllo\r\nwörld\n";
const w = await call("write_file", { path: `${d}/notes/a.txt`, content: text, create_parents: true });
expect(w.bytes_written === Buffer.byteLength(text), `wrote ${w.bytes_written}`);
const r = await call("read_file", { path: `${d}/notes/a.txt` });
expect(r.content === text, "read back differs (line endings or encoding changed)");
expect(r.revision === w.revision, "revision differs between write and read");

const e = await call("edit_file", { path: `${d}/notes/a.txt`, edits: [{ old_text: "wörld", new_text: "world" }] });
expect(e.diff.includes("-wörld") && e.diff.includes("+world"), "edit diff missing");
const stale = await call("write_file", { path: `${d}/notes/a.txt`, content: "x", if_revision: w.revision });
expect(stale.error?.code === "CONFLICT", `stale write: ${JSON.stringify(stale)}`);

const m = await call("move", { src: `${d}/notes/a.txt`, dst: `${d}/notes/b.txt` });
expect(m.dst === `${d}/notes/b.txt`, "move result");
const gone = await call("stat", { path: `${d}/notes/a.txt` });
expect(gone.exists === false, "source still exists after move");

for (let i = 0; i < 150; i++) {
  await call("write_file", { path: `${d}/many/f${String(i).padStart(3, "0")}.txt`, content: i === 149 ? "needle\n" : "hay\n", create_parents: true });
}
wireProgress = 0;
const s = await call("search_text", { path: d, query: "needle" }, { onprogress: () => {} });
expect(s.matches.length === 1 && s.matches[0].path === `${d}/many/f149.txt`, `search: ${JSON.stringify(s.matches)}`);
seen.progress_notifications = wireProgress;
expect(wireProgress >= 2, `${wireProgress} progress notifications before the result of a 150-file search (want one per 64 files)`);

// Listings are lines: TYPE NAME, or with details TYPE SIZE MTIME NAME.
const found = await call("find_files", { pattern: `${d}/many/f14*.txt` });
expect(found.count === 10 && found.lines.length === 10, `find_files found ${found.count}`);
expect(found.lines[0] === `f ${d}/many/f140.txt`, `find_files line ${found.lines[0]}`);
const detailed = await call("find_files", { pattern: `${d}/many/f14*.txt`, details: true });
expect(detailed.lines[0] === `f 4 ${detailed.lines[0].split(" ")[2]} ${d}/many/f140.txt`, `find_files line with details ${detailed.lines[0]}`);
const page = await call("list_directory", { path: `${d}/many`, max_entries: 100 });
expect(page.count === 100 && page.lines.length === 100 && page.truncated && page.next_cursor, "pagination");
const page2 = await call("list_directory", { path: `${d}/many`, max_entries: 100, cursor: page.next_cursor });
expect(page2.count === 50 && page2.lines.length === 50 && !page2.truncated, "second page");
const reused = await call("list_directory", { path: `${d}/many`, max_entries: 100, cursor: page.next_cursor });
expect(reused.error?.code === "CURSOR_EXPIRED", `a used cursor: ${JSON.stringify(reused)}`);

const esc = await call("read_file", { path: "../outside.txt" });
expect(esc.error?.code === "PATH_OUTSIDE_ALLOWED_ROOT", `escape: ${JSON.stringify(esc)}`);
const esc2 = await call("write_file", { path: "/etc/hostlink-e2e", content: "x" });
expect(esc2.error?.code === "PATH_OUTSIDE_ALLOWED_ROOT", `absolute escape: ${JSON.stringify(esc2)}`);
seen.escape_code = esc.error.code;

await client.close();
seen.ok = true;
console.log(JSON.stringify(seen));
process.exit(0);
