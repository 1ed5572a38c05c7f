import { describe, expect, it } from 'vitest';
import { asRouterError, RouterError } from '../../src/daemon/http/errors.js';
import { CodecError } from '../../src/daemon/translate/errors.js';
import { decodeGeminiRequest, geminiClient as client, geminiUpstream as upstream } from '../../src/daemon/translate/formats/gemini/index.js';
import { SKIP_SIGNATURE } from '../../src/daemon/translate/formats/gemini/encode-contents.js';
import { openAiResponsesClient } from '../../src/daemon/translate/formats/openai-responses/index.js';
import type { IrRequest } from '../../src/daemon/translate/ir.js';

const user = (text: string) => ({ role: 'user', parts: [{ text }] });

function errorOf(fn: () => unknown): RouterError {
  try {
    fn();
  } catch (e) {
    // Codecs raise their own error; the HTTP layer maps it to the standard 400 (status, code, param).
    if (e instanceof CodecError) return asRouterError(e) as RouterError;
    throw e;
  }
  throw new Error('expected a RouterError');
}

describe('Gemini request decoding', () => {
  it('takes the model and stream flag from the route, not the body', () => {
    const ir = client.decodeRequest({ model: 'models/gemini-x', stream: true, contents: [user('hi')] });
    expect(ir).toMatchObject({ model: 'gemini-x', stream: true, messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }] });
    expect(decodeGeminiRequest({ contents: [user('hi')] }, 'g', false)).toMatchObject({ model: 'g', stream: false });
  });

  it('reads parts, thoughts, signatures and pairs function responses with calls by name', () => {
    const ir = decodeGeminiRequest(
      {
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'Look' }, { inlineData: { mimeType: 'image/png', data: 'AAA' } }, { fileData: { mimeType: 'application/pdf', fileUri: 'https://x/files/1' } }] },
          {
            role: 'model',
            parts: [
              { text: 'plan', thought: true, thoughtSignature: 'ts0' },
              { functionCall: { name: 'weather', args: { city: 'Paris' } }, thoughtSignature: 'ts1' },
              { functionCall: { name: 'weather', args: { city: 'Rome' } } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { name: 'weather', response: { output: 'sunny' } } },
              { functionResponse: { name: 'weather', response: { error: 'down' } } },
            ],
          },
        ],
      },
      'g',
      false,
    );
    expect(ir.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(ir.messages).toEqual([
      {
        role: 'user',
        parts: [
          { type: 'text', text: 'Look' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAA' } },
          { type: 'document', source: { kind: 'url', url: 'https://x/files/1', mediaType: 'application/pdf' } },
        ],
      },
      {
        role: 'assistant',
        parts: [
          { type: 'thinking', text: 'plan', signature: 'ts0', issuer: 'gemini' },
          { type: 'thinking', text: '', signature: 'ts1', issuer: 'gemini' },
          { type: 'tool_call', id: 'call_0', name: 'weather', arguments: '{"city":"Paris"}' },
          { type: 'tool_call', id: 'call_1', name: 'weather', arguments: '{"city":"Rome"}' },
        ],
      },
      {
        role: 'tool',
        parts: [
          { type: 'tool_result', toolCallId: 'call_0', name: 'weather', content: [{ type: 'text', text: 'sunny' }] },
          { type: 'tool_result', toolCallId: 'call_1', name: 'weather', content: [{ type: 'text', text: 'down' }], isError: true },
        ],
      },
    ]);
  });

  it('prefers ids the client echoed', () => {
    const ir = decodeGeminiRequest(
      {
        contents: [
          user('q'),
          { role: 'model', parts: [{ functionCall: { id: 'a', name: 'f', args: {} } }, { functionCall: { id: 'b', name: 'f', args: {} } }] },
          { role: 'user', parts: [{ functionResponse: { id: 'b', name: 'f', response: { x: 1 } } }, { functionResponse: { name: 'f', response: {} } }] },
        ],
      },
      'g',
      false,
    );
    expect(ir.messages[2]?.parts.map((p) => (p.type === 'tool_result' ? [p.toolCallId, p.content[0]] : []))).toEqual([
      ['b', { type: 'text', text: '{"x":1}' }],
      ['a', { type: 'text', text: '{}' }],
    ]);
  });

  it('accepts snake_case field names without touching user data', () => {
    const ir = decodeGeminiRequest(
      {
        system_instruction: { parts: [{ text: 's' }] },
        contents: [{ role: 'user', parts: [{ inline_data: { mime_type: 'image/jpeg', data: 'B' } }] }],
        tools: [{ function_declarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: { city_name: { type: 'STRING', nullable: true } } } }] }],
        generation_config: { max_output_tokens: 9, thinking_config: { thinking_budget: 0 } },
      },
      'g',
      false,
    );
    expect(ir.messages[0]?.parts[0]).toEqual({ type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: 'B' } });
    expect(ir.tools).toEqual([{ type: 'function', name: 'f', parameters: { type: 'object', properties: { city_name: { type: ['string', 'null'] } } } }]);
    expect(ir).toMatchObject({ maxTokens: 9, reasoning: { enabled: false }, system: [{ type: 'text', text: 's' }] });
  });

  it('reads tools, tool config, generation config and keeps Gemini-only fields in passthrough', () => {
    const ir = decodeGeminiRequest(
      {
        contents: [user('q')],
        tools: [{ functionDeclarations: [{ name: 'f', description: 'd', parametersJsonSchema: { type: 'object' } }] }, { googleSearch: {} }],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } },
        generationConfig: {
          maxOutputTokens: 100,
          temperature: 0.5,
          topP: 0.9,
          topK: 40,
          stopSequences: ['END'],
          seed: 7,
          presencePenalty: 0.1,
          frequencyPenalty: 0.2,
          responseMimeType: 'application/json',
          responseSchema: { type: 'OBJECT', properties: { a: { type: 'INTEGER' } }, propertyOrdering: ['a'] },
          thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true },
          responseModalities: ['TEXT'],
        },
        safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      },
      'g',
      true,
    );
    expect(ir).toMatchObject({
      tools: [
        { type: 'function', name: 'f', description: 'd', parameters: { type: 'object' } },
        { type: 'builtin', format: 'gemini', raw: { googleSearch: {} } },
      ],
      toolChoice: { name: 'f' },
      maxTokens: 100,
      temperature: 0.5,
      topP: 0.9,
      topK: 40,
      stop: ['END'],
      seed: 7,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      responseFormat: { type: 'json_schema', name: 'response', schema: { type: 'object', properties: { a: { type: 'integer' } } } },
      reasoning: { effort: 'high', summary: 'auto' },
      passthrough: {
        format: 'gemini',
        fields: { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }], generationConfig: { responseModalities: ['TEXT'] } },
      },
    });
  });

  it('rejects invalid bodies with a 400 naming the parameter', () => {
    expect(errorOf(() => decodeGeminiRequest({}, 'g', false)).extra).toEqual({ param: 'contents' });
    expect(errorOf(() => decodeGeminiRequest({ contents: [{ role: 'bot', parts: [] }] }, 'g', false)).extra).toEqual({ param: 'contents[0].role' });
    expect(errorOf(() => decodeGeminiRequest({ contents: [{ parts: [{ functionCall: { args: {} } }] }] }, 'g', false)).status).toBe(400);
  });
});

describe('Gemini request encoding', () => {
  const ir: IrRequest = {
    model: 'g',
    system: [{ type: 'text', text: 'sys' }],
    messages: [
      { role: 'user', parts: [{ type: 'text', text: 'q' }, { type: 'image', source: { kind: 'url', url: 'https://x/cat.png' } }] },
      {
        role: 'assistant',
        parts: [
          { type: 'thinking', text: 'plan', signature: 's0', issuer: 'gemini' },
          { type: 'text', text: 'Calling.' },
          { type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{"a":1}' },
        ],
      },
      { role: 'tool', parts: [{ type: 'tool_result', toolCallId: 'toolu_1', content: [{ type: 'text', text: 'r' }], isError: true }] },
      { role: 'user', parts: [{ type: 'text', text: 'thanks' }] },
    ],
    tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }, { type: 'builtin', format: 'anthropic', raw: { type: 'web_search_20250305' } }],
    toolChoice: 'required',
    responseFormat: { type: 'json_schema', name: 'x', schema: { type: 'object' } },
    reasoning: { budgetTokens: 2048 },
    maxTokens: 10,
    stop: ['S'],
    stream: true,
  };

  it('builds contents, function declarations and generation config', () => {
    const request = structuredClone(ir);
    expect(upstream.encodeRequest(request)).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'q' }, { fileData: { mimeType: 'image/png', fileUri: 'https://x/cat.png' } }] },
        {
          role: 'model',
          parts: [
            { text: 'plan', thought: true, thoughtSignature: 's0' },
            { text: 'Calling.' },
            { functionCall: { id: 'toolu_1', name: 'f', args: { a: 1 } }, thoughtSignature: SKIP_SIGNATURE },
          ],
        },
        { role: 'user', parts: [{ functionResponse: { id: 'toolu_1', name: 'f', response: { error: 'r' } } }, { text: 'thanks' }] },
      ],
      systemInstruction: { parts: [{ text: 'sys' }] },
      tools: [{ functionDeclarations: [{ name: 'f', parametersJsonSchema: { type: 'object' } }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: {
        maxOutputTokens: 10,
        stopSequences: ['S'],
        responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object' },
        thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
      },
    });
    expect(request.dropped).toContain('tools: anthropic built-in web_search_20250305');
  });

  it('folds a signature-only thinking part onto the next part, or keeps it on an empty text part', () => {
    const body = upstream.encodeRequest({
      model: 'g',
      system: [],
      stream: false,
      messages: [
        { role: 'user', parts: [{ type: 'text', text: 'q' }] },
        {
          role: 'assistant',
          parts: [
            { type: 'thinking', text: '', signature: 'fc-sig', issuer: 'gemini' },
            { type: 'tool_call', id: 'c', name: 'f', arguments: '{}' },
            { type: 'text', text: 'tail' },
            { type: 'thinking', text: '', signature: 'end-sig', issuer: 'gemini' },
          ],
        },
      ],
    });
    expect((body.contents as Array<{ parts: unknown[] }>)[1]?.parts).toEqual([
      { functionCall: { id: 'c', name: 'f', args: {} }, thoughtSignature: 'fc-sig' },
      { text: 'tail' },
      { text: '', thoughtSignature: 'end-sig' },
    ]);
  });

  it('maps efforts to thinking levels and merges Gemini passthrough', () => {
    const decoded = decodeGeminiRequest({ contents: [user('q')], safetySettings: [{ category: 'c', threshold: 't' }], generationConfig: { candidateCount: 2 } }, 'g', false);
    decoded.reasoning = { effort: 'xhigh' };
    expect(upstream.encodeRequest(decoded)).toMatchObject({
      safetySettings: [{ category: 'c', threshold: 't' }],
      generationConfig: { candidateCount: 2, thinkingConfig: { thinkingLevel: 'high' } },
    });
  });

  it('needs a tool name for every result and rejects Responses stored state', () => {
    const orphan: IrRequest = { model: 'g', system: [], stream: false, messages: [{ role: 'tool', parts: [{ type: 'tool_result', toolCallId: 'x', content: [] }] }] };
    expect(errorOf(() => upstream.encodeRequest(orphan)).status).toBe(400);
    const stateful = openAiResponsesClient.decodeRequest({ model: 'm', input: 'hi', previous_response_id: 'resp_1' });
    expect(errorOf(() => upstream.encodeRequest(stateful)).extra).toEqual({ param: 'previous_response_id' });
  });
});
