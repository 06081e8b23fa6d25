// Drives strata's proxy with the npm openai client, as a Node app would:
// a tool round and a plain turn, the whole history resent on each call,
// streamed (the client's stream helper assembles the reply) or not, then
// a call the proxy refuses. Prints one JSON object on stdout.
//
//   node openai-node.mjs NODE_MODULES BASE_URL stream|plain CONVERSATION API_KEY
import { createRequire } from 'node:module';
import { join } from 'node:path';

const [nodeModules, baseURL, how, conv, apiKey] = process.argv.slice(2);
const require = createRequire(join(nodeModules, 'strata-test.cjs'));
const { OpenAI } = require('openai');

const client = new OpenAI({ baseURL, apiKey, maxRetries: 0,
  defaultHeaders: { 'X-Strata-Conversation': conv } });
const tools = [{ type: 'function', function: { name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

async function call(messages) {
  if (how === 'stream') {
    const runner = client.chat.completions.stream({ model: 'fake', messages, tools });
    const done = await runner.finalChatCompletion();
    return { message: done.choices[0].message, headers: null };
  }
  const { data, response } = await client.chat.completions.create({ model: 'fake', messages, tools }).withResponse();
  return { message: data.choices[0].message, headers: Object.fromEntries(response.headers.entries()) };
}

const out = { replies: [], headers: [] };
const messages = [{ role: 'system', content: 'You plan trips.' }, { role: 'user', content: 'What is the weather in Paris?' }];
let r = await call(messages);
out.replies.push(r.message);
out.headers.push(r.headers);
const tc = r.message.tool_calls?.[0];
messages.push({ role: 'assistant', content: r.message.content ?? null, tool_calls: r.message.tool_calls });
messages.push({ role: 'tool', tool_call_id: tc?.id ?? 'missing', content: '{"sky":"clear","celsius":21}' });
r = await call(messages);
out.replies.push(r.message);
out.headers.push(r.headers);
messages.push({ role: 'assistant', content: r.message.content });
messages.push({ role: 'user', content: 'Thanks, that helps.' });
r = await call(messages);
out.replies.push(r.message);
out.headers.push(r.headers);

// A tool result without its call's id: the proxy refuses it, and the
// client raises its own error type with the proxy's words.
try {
  await client.chat.completions.create({ model: 'fake', messages: [{ role: 'tool', content: 'x' }] });
  out.error = null;
} catch (e) {
  out.error = { class: e.constructor.name, status: e.status, type: e.type ?? null, message: e.error?.message ?? e.message,
    requestID: e.requestID ?? null };
}
process.stdout.write(JSON.stringify(out) + '\n');
