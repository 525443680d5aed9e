// A hostile MCP HTTP client with the official MCP TypeScript SDK: it holds
// the bearer token every MCP HTTP client holds and tries, with it, every
// way to approve its own request — the local user's control methods as
// tools, the web console (logging in with the token, a bearer header, a
// made-up session cookie, decide, batch decide, save a grant, revoke), and
// answering elicitation itself.
// Usage: node mcp_not_the_user.mjs <mcp-url> <token> <grant-id>
// Prints one JSON object: what it saw at each step.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mcpURL, token, grantID] = process.argv.slice(2);
const base = new URL(mcpURL).origin;
const seen = { tools: [], local: {}, console: {}, elicited: 0 };

// It declares elicitation and would approve anything it is asked.
const client = new Client({ name: "not-the-user", version: "1.0.0" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async () => {
  seen.elicited++;
  return { action: "accept", content: { approve: true } };
});
const transport = new StreamableHTTPClientTransport(new URL(mcpURL), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
seen.tools = (await client.listTools()).tools.map((t) => t.name);

// Its own write, held for the user's approval.
const write = { path: "mine.txt", content: "written by the agent\n" };
let res = await client.callTool({ name: "write_file", arguments: write }, undefined, { timeout: 120000 });
seen.first = res.isError ? JSON.parse(res.content[0].text).error : { ran: true };
const id = seen.first.details?.approval_id ?? "apr_unknown";
seen.approval_id = id;

// The control channel's methods, as tools.
for (const name of ["approvals.decide", "approvals.decide_batch", "approvals.save", "approvals.revoke", "approvals.list",
  "console.login", "reload", "stop", "approvals_decide", "console_login"]) {
  try {
    const r = await client.callTool({ name, arguments: { id, ids: [id], decision: "approve", scope: "class", minutes: 1440, apply: true } });
    seen.local[name] = r.isError ? { error: r.content?.[0]?.text ?? "error" } : { result: r };
  } catch (e) {
    seen.local[name] = { error: String(e.message ?? e) };
  }
}

// The console, with the token and with made-up credentials. Each answer
// is recorded with its status and whether it set a session cookie; a
// session any of them gets, with the form token read from its page, is
// what the deciding requests then use (else a made-up one).
let cookie = `hostlink_console=${token}`;
let csrf = token;
async function attempt(name, path, init) {
  const r = await fetch(base + path, { redirect: "manual", ...init });
  const set = r.headers.get("set-cookie") ?? "";
  const body = await r.text();
  const got = /hostlink_console=([^;]+)/.exec(set);
  seen.console[name] = { status: r.status, session: !!got, location: r.headers.get("location") ?? "",
    page_has_csrf: body.includes('name="csrf"') };
  if (got) {
    cookie = `hostlink_console=${got[1]}`;
    const page = await (await fetch(base + "/console/approvals", { headers: { Cookie: cookie } })).text();
    csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? csrf;
  }
}
const form = (o) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base, Cookie: cookie },
  body: new URLSearchParams({ csrf, ...o }).toString(),
});
await attempt("login with the token", "/console/login", {
  method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base }, body: new URLSearchParams({ token }).toString(),
});
await attempt("the token as a login code", "/console/login?code=" + encodeURIComponent(token), {});
await attempt("a bearer header", "/console/approvals", { headers: { Authorization: `Bearer ${token}` } });
await attempt("the token as the session cookie", "/console/approvals", { headers: { Cookie: `hostlink_console=${token}` } });
await attempt("save a grant", `/console/grants/${grantID}/save`, form({}));
await attempt("confirm", `/console/approvals/${id}/confirm`, form({ proposal: "prp_x" }));
await attempt("decide in a batch", "/console/approvals/decide", form({ id, decision: "approve", scope: "class", minutes: "1440" }));
await attempt("decide", `/console/approvals/${id}/decide`, form({ decision: "approve", scope: "class", minutes: "1440" }));
await attempt("revoke a grant", `/console/grants/${grantID}/revoke`, form({}));

// Sent again: still waiting for the user, and no prompt of its own decided.
res = await client.callTool({ name: "write_file", arguments: write }, undefined, { timeout: 120000 });
seen.again = res.isError ? JSON.parse(res.content[0].text).error : { ran: true };
console.log(JSON.stringify(seen));
await client.close();
