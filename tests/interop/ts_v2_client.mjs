// The TypeScript SDK v2 client (@modelcontextprotocol/client) driven from the command line, for
// mcpbind's interop tests: node ts_v2_client.mjs MODULES NEGOTIATION SCENARIO stdio COMMAND ARGS...
// or ... SCENARIO http URL. MODULES is the node_modules folder holding the SDK; NEGOTIATION is
// "auto" or a version to pin; SCENARIO is "everything" (examples/everything.py) or "conformance"
// (examples/conformance_server.py). Prints one JSON object of what the client saw to stdout.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, negotiation, scenario, kind, ...target] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(join(modules, '@modelcontextprotocol/client/dist', file)).href);
const { Client, StreamableHTTPClientTransport } = await load('index.mjs');
const { StdioClientTransport } = await load('stdio.mjs');

const client = new Client(
    { name: 'ts-v2-interop', version: '0.0.1' },
    {
        capabilities: { sampling: {}, elicitation: { form: {} } },
        versionNegotiation: { mode: negotiation === 'auto' ? 'auto' : { pin: negotiation } }
    }
);
const seen = { sampling: [], elicitation: [] };
client.setRequestHandler('sampling/createMessage', async (request) => {
    const text = request.params.messages[0].content.text;
    seen.sampling.push(text);
    return { role: 'assistant', content: { type: 'text', text: `echo: ${text}` }, model: 'ts-v2-test', stopReason: 'endTurn' };
});
client.setRequestHandler('elicitation/create', async (request) => {
    seen.elicitation.push(request.params.message);
    return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
});

const transport =
    kind === 'stdio'
        ? new StdioClientTransport({ command: target[0], args: target.slice(1), env: process.env, stderr: 'inherit' })
        : new StreamableHTTPClientTransport(new URL(target[0]));

const out = {};
const text = (result) => result.content.filter((block) => block.type === 'text').map((block) => block.text).join('');
try {
    await client.connect(transport);
    out.version = client.getNegotiatedProtocolVersion();
    out.era = client.getProtocolEra();
    out.serverName = client.getServerVersion()?.name;
    out.tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
    if (scenario === 'everything') {
        const weather = await client.callTool({ name: 'weather', arguments: { city: 'Oslo' } });
        out.weather = weather.structuredContent;
        out.add = text(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }));
        const progress = [];
        const countdown = await client.callTool(
            { name: 'countdown', arguments: { start: 3 } },
            { onprogress: (p) => progress.push([p.progress, p.total]) }
        );
        out.countdown = text(countdown);
        out.progress = progress;
        await client.callTool({ name: 'write_note', arguments: { name: 'ts', text: 'from node' } });
        const read = await client.readResource({ uri: 'notes://ts' });
        out.note = read.contents[0].text;
        const prompt = await client.getPrompt({ name: 'summarize', arguments: { name: 'ts', style: 'short' } });
        out.prompt = prompt.messages.map((m) => [m.role, m.content.text]);
    } else {
        out.simple = text(await client.callTool({ name: 'test_simple_text', arguments: {} }));
        const progress = [];
        await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, { onprogress: (p) => progress.push(p.progress) });
        out.progress = progress;
        out.resource = (await client.readResource({ uri: 'test://static-text' })).contents[0].text;
        const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
        out.prompt = prompt.messages.map((m) => m.content.text);
        out.sampling = text(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is 2+2?' } }));
        out.elicitation = text(await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } }));
        out.seen = seen;
        if (out.era === 'modern') {
            let changed;
            const gotChange = new Promise((resolve) => (changed = resolve));
            client.setNotificationHandler('notifications/tools/list_changed', () => changed());
            const subscription = await client.listen({ toolsListChanged: true });
            out.honored = subscription.honoredFilter;
            out.added = text(await client.callTool({ name: 'test_add_tool', arguments: {} }));
            await gotChange;
            out.toolsAfter = (await client.listTools()).tools.map((tool) => tool.name).filter((name) => !out.tools.includes(name));
            await subscription.close();
            out.closed = await subscription.closed;
        }
    }
} catch (error) {
    out.error = String(error?.stack ?? error);
} finally {
    await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
