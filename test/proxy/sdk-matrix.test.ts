/**
 * Every official SDK against the real daemon, which talks to mock upstreams of every wire format:
 * streaming and not, a plain reply and a full tool-call round trip. The SDKs' own parsers must accept
 * every reply router produces.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { generateText, streamText, stepCountIs, tool, jsonSchema, type LanguageModel } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import type { MockUpstream } from '../mocks/upstream.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

const TOOL_RESULT = 'TOOL_RESULT_42';
const FINAL_TEXT = 'It is sunny in Paris.';
const PARAMS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const;

/** Upstream formats, each reached through a provider whose native format it is. */
const UPSTREAMS = {
  'openai-chat': 'deepseek/deepseek-chat',
  'openai-responses': 'resp/gpt-5',
  anthropic: 'anthropic/claude-haiku-4-5',
  gemini: 'gemini/gemini-2.5-flash',
} as const;
type Upstream = keyof typeof UPSTREAMS;

let mock: MockUpstream;
let router: RouterProcess;
let key: string;

let env: ProxyEnv;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'deepseek', apiKey: 'sk-up-1' },
    { provider: 'anthropic', apiKey: 'sk-up-2' },
    { provider: 'gemini', apiKey: 'sk-up-3' },
  ]);
  ({ mock, router, key } = env);
  const node = await router.manage('POST', '/api/provider-nodes', {
    name: 'Responses node',
    prefix: 'resp',
    type: 'openai-compatible',
    apiType: 'responses',
    baseUrl: mock.openaiBase,
  });
  expect(node.status).toBe(201);
  // The upstream answers with a tool call unless the conversation already holds the tool's result.
  mock.handle((req) => {
    if (!req.body.includes('get_weather')) return undefined;
    if (req.body.includes(TOOL_RESULT)) return { type: 'text', text: FINAL_TEXT };
    return { type: 'tool-calls', calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] };
  });
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

interface Client {
  text(model: string, stream: boolean): Promise<string>;
  /** Runs a full tool round trip; returns the final text. */
  tools(model: string, stream: boolean): Promise<string>;
}

const openaiChat = (): Client => {
  const c = new OpenAI({ apiKey: key, baseURL: `${router.url}/v1`, maxRetries: 0 });
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: PARAMS } }];
  const run = async (model: string, stream: boolean, messages: OpenAI.ChatCompletionMessageParam[], withTools: boolean) => {
    const params = { model, messages, ...(withTools ? { tools } : {}) };
    if (!stream) return (await c.chat.completions.create(params)).choices[0]!.message;
    return (await c.chat.completions.stream(params).finalChatCompletion()).choices[0]!.message;
  };
  return {
    async text(model, stream) {
      return (await run(model, stream, [{ role: 'user', content: 'hi' }], false)).content ?? '';
    },
    async tools(model, stream) {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
      const first = await run(model, stream, messages, true);
      const call = first.tool_calls?.[0];
      expect(call?.type === 'function' && call.function.name).toBe('get_weather');
      if (call?.type !== 'function') throw new Error('no function call');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
      messages.push({ role: 'assistant', content: null, tool_calls: first.tool_calls }, { role: 'tool', tool_call_id: call.id, content: TOOL_RESULT });
      return (await run(model, stream, messages, true)).content ?? '';
    },
  };
};

const openaiResponses = (): Client => {
  const c = new OpenAI({ apiKey: key, baseURL: `${router.url}/v1`, maxRetries: 0 });
  const tools = [{ type: 'function' as const, name: 'get_weather', parameters: PARAMS as unknown as Record<string, unknown>, strict: false }];
  const run = async (model: string, stream: boolean, input: OpenAI.Responses.ResponseInput, withTools: boolean) => {
    const params = { model, input, ...(withTools ? { tools } : {}) };
    return stream ? c.responses.stream(params).finalResponse() : c.responses.create(params);
  };
  return {
    async text(model, stream) {
      return (await run(model, stream, [{ role: 'user', content: 'hi' }], false)).output_text;
    },
    async tools(model, stream) {
      const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Paris?' }];
      const first = await run(model, stream, input, true);
      const call = first.output.find((o) => o.type === 'function_call');
      if (!call || call.type !== 'function_call') throw new Error('no function call');
      expect(call.name).toBe('get_weather');
      expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
      input.push(call, { type: 'function_call_output', call_id: call.call_id, output: TOOL_RESULT });
      return (await run(model, stream, input, true)).output_text;
    },
  };
};

const anthropicClient = (): Client => {
  const c = new Anthropic({ apiKey: key, baseURL: router.url, maxRetries: 0 });
  const tools = [{ name: 'get_weather', input_schema: PARAMS as unknown as Anthropic.Tool.InputSchema }];
  const run = (model: string, stream: boolean, messages: Anthropic.MessageParam[], withTools: boolean) => {
    const params = { model, max_tokens: 200, messages, ...(withTools ? { tools } : {}) };
    return stream ? c.messages.stream(params).finalMessage() : c.messages.create(params);
  };
  const text = (m: Anthropic.Message) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  return {
    async text(model, stream) {
      return text(await run(model, stream, [{ role: 'user', content: 'hi' }], false));
    },
    async tools(model, stream) {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
      const first = await run(model, stream, messages, true);
      expect(first.stop_reason).toBe('tool_use');
      const call = first.content.find((b) => b.type === 'tool_use');
      if (!call || call.type !== 'tool_use') throw new Error('no tool_use');
      expect(call.input).toEqual({ city: 'Paris' });
      messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: TOOL_RESULT }] });
      return text(await run(model, stream, messages, true));
    },
  };
};

const geminiClient = (): Client => {
  const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: router.url } });
  const config = { tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: PARAMS }] }] };
  const run = async (model: string, stream: boolean, contents: any[], withTools: boolean) => {
    const params = { model, contents, ...(withTools ? { config } : {}) };
    if (!stream) {
      const r = await ai.models.generateContent(params);
      return { text: r.text ?? '', calls: r.functionCalls ?? [], parts: r.candidates?.[0]?.content?.parts ?? [] };
    }
    let text = '';
    const calls: any[] = [];
    const parts: any[] = [];
    for await (const chunk of await ai.models.generateContentStream(params)) {
      text += chunk.text ?? '';
      calls.push(...(chunk.functionCalls ?? []));
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
    }
    return { text, calls, parts };
  };
  return {
    async text(model, stream) {
      return (await run(model, stream, [{ role: 'user', parts: [{ text: 'hi' }] }], false)).text;
    },
    async tools(model, stream) {
      const contents: any[] = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
      const first = await run(model, stream, contents, true);
      const call = first.calls[0];
      expect(call?.name).toBe('get_weather');
      expect(call?.args).toEqual({ city: 'Paris' });
      contents.push(
        { role: 'model', parts: first.parts.filter((p: any) => p.functionCall) },
        { role: 'user', parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { result: TOOL_RESULT } } }] },
      );
      return (await run(model, stream, contents, true)).text;
    },
  };
};

const aiSdk = (make: (model: string) => LanguageModel): Client => {
  const weather = tool({
    description: 'Weather',
    inputSchema: jsonSchema<{ city: string }>(PARAMS as any),
    execute: async ({ city }) => {
      expect(city).toBe('Paris');
      return TOOL_RESULT;
    },
  });
  return {
    async text(model, stream) {
      if (!stream) return (await generateText({ model: make(model), prompt: 'hi', maxRetries: 0 })).text;
      const r = streamText({ model: make(model), prompt: 'hi', maxRetries: 0, onError: () => {} });
      return await r.text;
    },
    async tools(model, stream) {
      const opts = { model: make(model), prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(2), maxRetries: 0 };
      if (!stream) return (await generateText(opts)).text;
      const r = streamText({ ...opts, onError: () => {} });
      return await r.text;
    },
  };
};

const CLIENTS: Record<string, () => Client> = {
  'openai chat': openaiChat,
  'openai responses': openaiResponses,
  anthropic: anthropicClient,
  gemini: geminiClient,
  'ai-sdk openai': () => aiSdk((m) => createOpenAI({ apiKey: key, baseURL: `${router.url}/v1` }).chat(m)),
  'ai-sdk anthropic': () => aiSdk((m) => createAnthropic({ apiKey: key, baseURL: `${router.url}/v1` })(m)),
  'ai-sdk google': () => aiSdk((m) => createGoogleGenerativeAI({ apiKey: key, baseURL: `${router.url}/v1beta` })(m)),
};

for (const [clientName, make] of Object.entries(CLIENTS)) {
  describe(clientName, () => {
    for (const upstream of Object.keys(UPSTREAMS) as Upstream[]) {
      for (const stream of [false, true]) {
        const label = `-> ${upstream}${stream ? ' (stream)' : ''}`;
        it(`text ${label}`, async () => {
          expect(await make().text(UPSTREAMS[upstream], stream)).toBe('Hello from the mock.');
        });
        it(`tool round trip ${label}`, async () => {
          expect(await make().tools(UPSTREAMS[upstream], stream)).toBe(FINAL_TEXT);
        });
      }
    }
  });
}
