// Function tools through the official OpenAI client and the Vercel AI SDK, on
// a random-weights model with a real tool-calling template (Qwen2.5's, from
// `parley mkmodel --chat-template hermes`): a model that knows nothing still
// returns calls that follow the tools' schemas, because a grammar holds it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Ajv from 'ajv';
import { generateText, jsonSchema, tool } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { startServer, binary } from './server.mjs';

let dir;
let server;
let client;

const weatherParams = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1, maxLength: 16 },
    unit: { enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
  },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const timeParams = { type: 'object', properties: { zone: { type: 'string', maxLength: 8 } }, required: ['zone'], additionalProperties: false };
const tools = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather forecast for a city', parameters: weatherParams } },
  { type: 'function', function: { name: 'get_time', description: 'Time in a zone', parameters: timeParams } },
];
const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-tools-'));
  const model = join(dir, 'tools.gguf');
  execFileSync(binary, ['mkmodel', '--dim', '64', '--layers', '2', '--heads', '4', '--ctx', '4096',
    '--chat-template', 'hermes', '-o', model], { stdio: 'ignore' });
  server = await startServer(['-m', model, '--max-running', '16']);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  assert.equal((await server.stop()).code, 0);
  rmSync(dir, { recursive: true, force: true });
});

const ajv = new Ajv({ strict: true });
const validators = { get_weather: ajv.compile(weatherParams), get_time: ajv.compile(timeParams) };

function checkCall(call) {
  assert.match(call.id, /^call_/);
  assert.equal(call.type, 'function');
  const validate = validators[call.function.name];
  assert.ok(validate, `unknown function ${call.function.name}`);
  const args = JSON.parse(call.function.arguments);
  assert.ok(validate(args), `${call.function.arguments}: ${JSON.stringify(validate.errors)}`);
}

test('tool_choice required: 100 seeds out of 100 give one schema-valid call', async () => {
  const answers = await Promise.all(Array.from({ length: 100 }, (_, seed) => client.chat.completions.create({
    model: 'tools', messages, tools, tool_choice: 'required', parallel_tool_calls: false,
    temperature: 1, seed, max_tokens: 300,
  })));
  const names = new Set();
  for (const r of answers) {
    const choice = r.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls', JSON.stringify(choice));
    assert.equal(choice.message.tool_calls.length, 1);
    checkCall(choice.message.tool_calls[0]);
    names.add(choice.message.tool_calls[0].function.name);
  }
  assert.equal(names.size, 2, 'the model chooses among the tools');
});

test('a named function is the one called, streamed as OpenAI streams calls', async () => {
  const params = { model: 'tools', messages, tools, tool_choice: { type: 'function', function: { name: 'get_time' } },
    parallel_tool_calls: false, temperature: 0.9, seed: 4, max_tokens: 300 };
  const whole = await client.chat.completions.create(params);
  assert.equal(whole.choices[0].message.tool_calls[0].function.name, 'get_time');
  checkCall(whole.choices[0].message.tool_calls[0]);

  const stream = await client.chat.completions.create({ ...params, stream: true });
  const calls = [];
  let finish;
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    if (!c) continue;
    if (c.finish_reason) finish = c.finish_reason;
    for (const d of c.delta.tool_calls ?? []) {
      if (d.id) calls[d.index] = { id: d.id, name: d.function.name, arguments: '' };
      calls[d.index].arguments += d.function.arguments ?? '';
    }
  }
  assert.equal(finish, 'tool_calls');
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, 'get_time');
  assert.equal(calls[0].arguments, whole.choices[0].message.tool_calls[0].function.arguments);
});

test('a full round trip: call, tool result, answer', async () => {
  const first = await client.chat.completions.create({ model: 'tools', messages, tools, tool_choice: 'required',
    parallel_tool_calls: false, temperature: 0, max_tokens: 300 });
  const call = first.choices[0].message.tool_calls[0];
  const history = [...messages, first.choices[0].message,
    { role: 'tool', tool_call_id: call.id, content: JSON.stringify({ temperature: 21, sky: 'clear' }) }];
  const answer = await client.chat.completions.create({ model: 'tools', messages: history, tools, tool_choice: 'none',
    temperature: 0, max_tokens: 20 });
  assert.equal(typeof answer.choices[0].message.content, 'string');
  assert.equal(answer.choices[0].message.tool_calls, undefined);
  // The history reached the template: the prompt holds the call and its result.
  const bare = await client.chat.completions.create({ model: 'tools', messages, tools, tool_choice: 'none', max_tokens: 1 });
  assert.ok(answer.usage.prompt_tokens > bare.usage.prompt_tokens + 20, `${answer.usage.prompt_tokens} vs ${bare.usage.prompt_tokens}`);
  // `auto` with the same history: text, or a call that follows the schema.
  const auto = await client.chat.completions.create({ model: 'tools', messages: history, tools, temperature: 1, seed: 9, max_tokens: 200 });
  for (const c of auto.choices[0].message.tool_calls ?? []) checkCall(c);
});

test('the Vercel AI SDK gets a typed tool call', async () => {
  const provider = createOpenAICompatible({ name: 'parley', baseURL: `${server.url}/v1`, apiKey: 'unused' });
  const result = await generateText({
    model: provider('tools'),
    prompt: 'What is the weather in Paris?',
    tools: { get_weather: tool({ description: 'Weather forecast for a city', inputSchema: jsonSchema(weatherParams) }) },
    toolChoice: 'required',
    temperature: 0.5,
    seed: 3,
    maxOutputTokens: 300,
    providerOptions: { parley: { parallel_tool_calls: false } },
  });
  assert.equal(result.finishReason, 'tool-calls');
  assert.equal(result.toolCalls.length, 1);
  assert.equal(result.toolCalls[0].toolName, 'get_weather');
  assert.ok(validators.get_weather(result.toolCalls[0].input), JSON.stringify(result.toolCalls[0].input));
});

test('bad tools are 400s naming the field', async () => {
  const bad = async (extra, param) => {
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages, max_tokens: 5, ...extra }),
    });
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error.param, param, JSON.stringify(body));
  };
  await bad({ tools, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice');
  await bad({ tool_choice: 'required' }, 'tool_choice');
  await bad({ tools: [{ type: 'function', function: { name: 'x', parameters: { type: 'string', pattern: 'a' } } }] }, 'tools[0].function.parameters');
  await bad({ tools: [{ type: 'code_interpreter' }] }, 'tools[0].type');
  await bad({ tools: [{ type: 'function', function: { name: 'bad name' } }] }, 'tools[0].function.name');
  await bad({ tools, tool_choice: 'required', response_format: { type: 'json_object' } }, 'response_format');
  await bad({ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id');
  await bad({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{not json' } }] }] },
    'messages[0].tool_calls[0].function.arguments');
});
