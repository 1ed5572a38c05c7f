import { z } from 'zod';
import type { FamilyReply } from '../family.js';

const imagesJson = z.looseObject({
  created: z.number(),
  data: z.array(z.looseObject({ url: z.string().optional(), b64_json: z.string().optional(), revised_prompt: z.string().optional() })),
  usage: z.looseObject({ input_tokens: z.number(), output_tokens: z.number(), total_tokens: z.number().optional() }).optional(),
});

/** OpenAI's images reply (`data` with `url` or `b64_json`; gpt-image's `usage`), or its image events with `stream: true`. */
export function imagesReply(edit: boolean): FamilyReply {
  const kind = edit ? 'image_edit' : 'image_generation';
  return {
    json: imagesJson,
    events: `With \`stream: true\`: OpenAI's image events (an \`event:\` line, then the JSON with the same \`type\`): \`${kind}.partial_image\` (b64_json, partial_image_index) as renderings come, then one \`${kind}.completed\` per image (b64_json, size, quality, background, output_format, usage). Gemini image models send each image whole: only \`${kind}.completed\` events.`,
  };
}
