// A server on the TypeScript SDK v2 (@modelcontextprotocol/server) for mcpbind's interop tests:
// node ts_v2_server.mjs MODULES stdio, or node ts_v2_server.mjs MODULES http PORT (127.0.0.1 only,
// MCP endpoint /mcp). MODULES is the node_modules folder holding the SDK and zod. Tools "add"
// (structured output), "count" (progress), "ask_name" (elicitation through a multi round-trip
// result), "summarize" (sampling through one) and "touch" (announces a tool-list change to
// subscriptions/listen streams); resource ts://greeting; prompt "greet".
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, kind, port] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(join(modules, file)).href);
const sdk = await load('@modelcontextprotocol/server/dist/index.mjs');
const { McpServer, inputRequired, inputResponse, createMcpHandler } = sdk;
const { z } = await load('zod/index.js');

let handler; // the HTTP handler (its notify face reaches the listen streams), once made

function build() {
    const server = new McpServer({ name: 'ts-v2-peer', version: '2.4.0' });
    server.registerTool(
        'add',
        {
            description: 'Add two integers',
            inputSchema: z.object({ a: z.number(), b: z.number() }),
            outputSchema: z.object({ sum: z.number() })
        },
        async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } })
    );
    server.registerTool('count', { description: 'Count to n with progress', inputSchema: z.object({ n: z.number() }) }, async ({ n }, ctx) => {
        for (let step = 1; step <= n; step++) {
            await ctx.mcpReq.notify({
                method: 'notifications/progress',
                params: { progressToken: ctx.mcpReq._meta?.progressToken, progress: step, total: n }
            });
        }
        return { content: [{ type: 'text', text: 'counted' }] };
    });
    server.registerTool('ask_name', { description: 'Asks the user for a name' }, async (ctx) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, 'name');
        if (answer.kind !== 'elicit') {
            return inputRequired({
                inputRequests: {
                    name: inputRequired.elicit({
                        message: 'What is your name?',
                        requestedSchema: z.object({ name: z.string() })
                    })
                },
                requestState: 'asked-once'
            });
        }
        const state = ctx.mcpReq.requestState?.() ?? 'none';
        return { content: [{ type: 'text', text: `hello ${answer.content?.name} (${answer.action}, ${state})` }] };
    });
    server.registerTool('summarize', { description: 'Summarize through sampling', inputSchema: z.object({ text: z.string() }) }, async ({ text }, ctx) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, 'summary');
        if (answer.kind !== 'sampling') {
            return inputRequired({
                inputRequests: {
                    summary: inputRequired.createMessage({
                        messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${text}` } }],
                        maxTokens: 50
                    })
                }
            });
        }
        return { content: [{ type: 'text', text: `summary: ${answer.result.content.text}` }] };
    });
    server.registerTool('touch', { description: 'Announces a change of the tool list' }, async () => {
        // over HTTP each request has its own instance: the handler's bus reaches the listen streams;
        // over stdio the connection's instance announces it and serveStdio routes it onto them
        if (handler) handler.notify.toolsChanged();
        else await server.sendToolListChanged();
        return { content: [{ type: 'text', text: 'touched' }] };
    });
    server.registerResource('greeting', 'ts://greeting', { mimeType: 'text/plain' }, async (uri) => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello from typescript' }]
    }));
    server.registerPrompt('greet', { description: 'Greets someone', argsSchema: z.object({ name: z.string() }) }, async ({ name }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name}.` } }]
    }));
    return server;
}

if (kind === 'stdio') {
    const { serveStdio } = await load('@modelcontextprotocol/server/dist/stdio.mjs');
    serveStdio(build);
} else {
    handler = createMcpHandler(build);
    const http = createServer(async (req, res) => {
        // node:http to the handler's web-standard fetch face, streaming the answer (SSE) through.
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        const body = chunks.length ? Buffer.concat(chunks) : undefined;
        const abort = new AbortController();
        res.on('close', () => abort.abort());
        const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
            method: req.method,
            headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
            body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
            signal: abort.signal
        });
        const response = await handler.fetch(request);
        res.writeHead(response.status, Object.fromEntries(response.headers));
        if (!response.body) return res.end();
        try {
            for await (const chunk of response.body) res.write(chunk);
        } catch {
            // the client went away
        }
        res.end();
    });
    http.listen(Number(port), '127.0.0.1');
}
