import { z } from 'zod';

/**
 * Zod schemas for a Gemini `generateContent` body (camelCase, see camel-case.ts). They check the shapes
 * translation relies on and let unknown fields through, so newer API fields do not break an older router.
 */

const blob = z.looseObject({ mimeType: z.string().min(1), data: z.string() });
const fileData = z.looseObject({ mimeType: z.string().optional(), fileUri: z.string().min(1) });
const functionCall = z.looseObject({
  id: z.string().optional(),
  name: z.string().min(1),
  args: z.record(z.string(), z.unknown()).nullish(),
});
const functionResponse = z.looseObject({
  id: z.string().optional(),
  name: z.string().min(1),
  response: z.record(z.string(), z.unknown()).nullish(),
  parts: z.array(z.looseObject({ inlineData: blob.optional(), fileData: fileData.optional() })).nullish(),
});

/** One part of a content: exactly one of the data fields, plus the thought flags. */
export const partSchema = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  inlineData: blob.optional(),
  fileData: fileData.optional(),
  functionCall: functionCall.optional(),
  functionResponse: functionResponse.optional(),
});
export type GeminiPart = z.infer<typeof partSchema>;

/** A content (turn). A missing role means `user`, as the API treats it. */
export const contentSchema = z.looseObject({
  role: z.enum(['user', 'model']).optional(),
  parts: z.array(partSchema),
});
export type GeminiContent = z.infer<typeof contentSchema>;

const functionDeclaration = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  parametersJsonSchema: z.record(z.string(), z.unknown()).nullish(),
});

/** A tool entry: function declarations, or one built-in (`googleSearch`, `codeExecution`, `urlContext`...). */
export const toolSchema = z.looseObject({ functionDeclarations: z.array(functionDeclaration).optional() });
export type GeminiTool = z.infer<typeof toolSchema>;

const thinkingConfig = z.looseObject({
  thinkingBudget: z.number().int().optional(),
  includeThoughts: z.boolean().optional(),
  thinkingLevel: z.string().optional(),
});

/** The generation settings router translates; others pass through to a Gemini upstream. */
export const generationConfigSchema = z.looseObject({
  maxOutputTokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  topK: z.number().int().positive().optional(),
  stopSequences: z.array(z.string()).optional(),
  seed: z.number().int().optional(),
  presencePenalty: z.number().optional(),
  frequencyPenalty: z.number().optional(),
  responseMimeType: z.string().optional(),
  responseSchema: z.record(z.string(), z.unknown()).optional(),
  responseJsonSchema: z.record(z.string(), z.unknown()).optional(),
  candidateCount: z.number().int().positive().optional(),
  thinkingConfig: thinkingConfig.optional(),
});
export type GeminiGenerationConfig = z.infer<typeof generationConfigSchema>;

/** The request body (the model comes from the URL path, see decode-request.ts). */
export const geminiRequestSchema = z.looseObject({
  contents: z.array(contentSchema),
  systemInstruction: z.union([z.string(), z.looseObject({ parts: z.array(partSchema) })]).optional(),
  tools: z.array(toolSchema).optional(),
  toolConfig: z
    .looseObject({
      functionCallingConfig: z
        .looseObject({
          mode: z.enum(['MODE_UNSPECIFIED', 'AUTO', 'ANY', 'NONE', 'VALIDATED']).optional(),
          allowedFunctionNames: z.array(z.string()).optional(),
        })
        .optional(),
    })
    .optional(),
  generationConfig: generationConfigSchema.optional(),
  safetySettings: z.array(z.looseObject({})).optional(),
  cachedContent: z.string().optional(),
});
export type GeminiRequest = z.infer<typeof geminiRequestSchema>;
