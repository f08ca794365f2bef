// The TypeScript SDK v2 client (@modelcontextprotocol/client) through `mcpbind proxy` to the
// reference server server-everything, for mcpbind's interop tests:
//   node ts_proxy_client.mjs MODULES NEGOTIATION URL
// MODULES is the node_modules folder holding the SDK; NEGOTIATION is "legacy" (a 2025 session) or a
// version to pin ("2026-07-28"). Each step's outcome is recorded apart (a failing step does not stop
// the others): prints one JSON object, {step: what it saw, ..., errors: {step: message}}.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, negotiation, url] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(join(modules, '@modelcontextprotocol/client/dist', file)).href);
const { Client, StreamableHTTPClientTransport } = await load('index.mjs');

const ROOT = 'file:///tmp/mcpbind-proxy-ts';
const client = new Client(
    { name: 'ts-v2-through-proxy', version: '0.0.1' },
    {
        capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } },
        versionNegotiation: { mode: negotiation === 'legacy' ? 'legacy' : { pin: negotiation } }
    }
);
const asked = [];
const logs = [];
const updated = [];
client.setRequestHandler('sampling/createMessage', async (request) => {
    asked.push(['sampling', request.params.messages[0].content.text]);
    return { role: 'assistant', content: { type: 'text', text: 'ts sampled' }, model: 'ts-model' };
});
client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(['elicitation', request.params.message]);
    return { action: 'accept', content: { name: 'Grace', check: false } };
});
client.setRequestHandler('roots/list', async () => {
    asked.push(['roots', null]);
    return { roots: [{ uri: ROOT, name: 'ts work' }] };
});
client.setNotificationHandler('notifications/message', (notification) => {
    logs.push([notification.params.level, notification.params.data]);
});
client.setNotificationHandler('notifications/resources/updated', (notification) => {
    updated.push(notification.params.uri);
});

const text = (result) => result.content.filter((block) => block.type === 'text').map((block) => block.text);
const until = async (condition, what) => {
    const deadline = Date.now() + 10000;
    while (!condition()) {
        if (Date.now() > deadline) throw new Error(`no ${what} within 10 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
};
const out = { errors: {} };
const step = async (name, body) => {
    try {
        out[name] = await body();
    } catch (error) {
        out.errors[name] = String(error?.stack ?? error);
    }
};

try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    out.version = client.getNegotiatedProtocolVersion();
    out.era = client.getProtocolEra();
    await step('tools', async () => (await client.listTools()).tools.map((tool) => tool.name));
    await step('echo', async () => text(await client.callTool({ name: 'echo', arguments: { message: 'from ts' } })));
    await step('sum', async () => text(await client.callTool({ name: 'get-sum', arguments: { a: 40, b: 2 } })));
    await step('structured', async () => {
        const result = await client.callTool({ name: 'get-structured-content', arguments: { location: 'Los Angeles' } });
        return { structured: result.structuredContent, text: text(result) };
    });
    await step('annotated', async () => {
        const result = await client.callTool({ name: 'get-annotated-message', arguments: { messageType: 'success', includeImage: true } });
        return result.content.map((block) => ({ type: block.type, annotations: block.annotations, mimeType: block.mimeType }));
    });
    await step('progress', async () => {
        const seen = [];
        const result = await client.callTool(
            { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
            { onprogress: (p) => seen.push([p.progress, p.total]) }
        );
        return { text: text(result), seen };
    });
    await step('sampling', async () => text(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'ts prompt' } })));
    await step('elicitation', async () => text(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })));
    await step('resources', async () => {
        const listed = (await client.listResources()).resources.map((resource) => resource.uri);
        const templates = (await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate);
        const read = (await client.readResource({ uri: 'demo://resource/dynamic/text/4' })).contents[0].text;
        return { listed, templates, read };
    });
    await step('prompts', async () => {
        const listed = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
        const got = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Lyon' } });
        return { listed, got: got.messages.map((m) => m.content.text) };
    });
    await step('completion', async () => {
        const result = await client.complete({
            ref: { type: 'ref/prompt', name: 'completable-prompt' },
            argument: { name: 'name', value: 'A' },
            context: { arguments: { department: 'Engineering' } }
        });
        return result.completion.values;
    });
    await step('cancelled', async () => {
        const controller = new AbortController();
        const call = client.callTool(
            { name: 'trigger-long-running-operation', arguments: { duration: 60, steps: 600 } },
            { onprogress: () => controller.abort('enough'), signal: controller.signal }
        );
        const outcome = await call.then(() => 'finished', (error) => `rejected: ${error}`);
        const after = text(await client.callTool({ name: 'echo', arguments: { message: 'after' } }));
        return { outcome, after };
    });
    if (out.era === 'legacy') {
        await step('subscribed', async () => {
            const uri = 'demo://resource/dynamic/text/2';
            await client.setLoggingLevel('debug');
            await client.subscribeResource({ uri });
            await until(() => logs.some(([, data]) => String(data).startsWith('Received Subscribe')), 'log message');
            await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
            try {
                await until(() => updated.includes(uri), 'resource update');
            } finally {
                await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
            }
            await client.unsubscribeResource({ uri });
            return updated.filter((seen) => seen === uri).length > 0;
        });
    }
    // (last, and bounded: a question the client cannot read leaves the call waiting)
    await step('roots', async () =>
        text(await client.callTool({ name: 'get-roots-list', arguments: {} }, { timeout: 5000 }))
    );
} catch (error) {
    out.errors.connect = String(error?.stack ?? error);
} finally {
    out.asked = asked;
    out.logs = logs;
    await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
