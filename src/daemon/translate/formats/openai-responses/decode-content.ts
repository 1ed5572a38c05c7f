import type { DocumentPart, ImagePart, IrPart, MediaSource, TextPart } from '../../ir.js';
import { decodeError } from '../../errors.js';
import { sourceFromUrl } from '../../util/media.js';
import type { ResponsesContentPart } from './schema.js';

type ImageInput = Extract<ResponsesContentPart, { type: 'input_image' }>;
type FileInput = Extract<ResponsesContentPart, { type: 'input_file' }>;

function decodeImage(part: ImageInput, param: string): ImagePart {
  const detail = part.detail ? { detail: part.detail } : {};
  if (part.image_url) return { type: 'image', source: sourceFromUrl(part.image_url, 'image/png'), ...detail };
  if (part.file_id) return { type: 'image', source: { kind: 'file', fileId: part.file_id }, ...detail };
  throw decodeError("An input_image part needs 'image_url' or 'file_id'.", param);
}

/** `file_data` is documented as a data URL, but bare base64 is common too; its type then comes from the name. */
function fileDataSource(data: string, filename: string | undefined): MediaSource {
  if (data.startsWith('data:')) return sourceFromUrl(data, 'application/pdf');
  const mediaType = filename && !filename.toLowerCase().endsWith('.pdf') ? 'application/octet-stream' : 'application/pdf';
  return { kind: 'base64', mediaType, data };
}

function decodeFile(part: FileInput, param: string): DocumentPart {
  const filename = part.filename ?? undefined;
  const name = filename ? { filename } : {};
  if (part.file_id) return { type: 'document', source: { kind: 'file', fileId: part.file_id }, ...name };
  if (part.file_data) return { type: 'document', source: fileDataSource(part.file_data, filename), ...name };
  if (part.file_url) return { type: 'document', source: { kind: 'url', url: part.file_url }, ...name };
  throw decodeError("An input_file part needs 'file_id', 'file_data' or 'file_url'.", param);
}

/** One content part of a message or of a `function_call_output`, as an IR part. */
export function decodeContentPart(part: ResponsesContentPart, param: string): IrPart {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'refusal', text: part.refusal };
    case 'input_image':
      return decodeImage(part, param);
    case 'input_file':
      return decodeFile(part, param);
    case 'input_audio':
      return { type: 'audio', data: part.input_audio.data, format: part.input_audio.format };
  }
}

/** Message content (`string | part[]`) as IR parts; empty text is dropped (no format wants empty blocks). */
export function decodeContent(content: string | ResponsesContentPart[], param: string): IrPart[] {
  const parts = typeof content === 'string' ? [{ type: 'input_text' as const, text: content }] : content;
  return parts
    .map((p, i) => decodeContentPart(p, `${param}[${i}]`))
    .filter((p) => p.type !== 'text' || p.text !== '');
}

/** Text of system/developer content, as IR system parts. */
export function systemText(parts: IrPart[]): TextPart[] {
  return parts.filter((p): p is TextPart => p.type === 'text');
}

/** Tool output (`string | part[]`) as the content a tool result may hold: text, images, documents. */
export function decodeToolOutput(output: string | ResponsesContentPart[], param: string): Array<TextPart | ImagePart | DocumentPart> {
  if (typeof output === 'string') return [{ type: 'text', text: output }];
  const out: Array<TextPart | ImagePart | DocumentPart> = [];
  for (const part of decodeContent(output, param)) {
    if (part.type === 'text' || part.type === 'image' || part.type === 'document') out.push(part);
  }
  return out;
}
