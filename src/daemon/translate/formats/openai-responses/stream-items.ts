import {
  functionCallItem,
  messageItem,
  reasoningItem,
  refusalContent,
  textContent,
  type OutputItem,
} from './output-items.js';

/** Emits one Responses stream event (the encoder adds `type` and `sequence_number`). */
export type Emit = (type: string, payload: Record<string, unknown>) => void;

interface TextBlock {
  kind: 'text' | 'refusal';
  outputIndex: number;
  contentIndex: number;
  itemId: string;
  text: string;
}
interface ThinkingBlock {
  kind: 'thinking';
  outputIndex: number;
  itemId: string;
  text: string;
  signature?: string;
}
interface ToolBlock {
  kind: 'tool';
  outputIndex: number;
  itemId: string;
  callId: string;
  name: string;
  args: string;
}
type Block = TextBlock | ThinkingBlock | ToolBlock;

/**
 * Tracks the output items of a streamed response and emits their added/delta/done events. IR blocks map to
 * items: text and refusal blocks are content parts of one open message item (closed when another kind of
 * item starts), thinking blocks are reasoning items, tool calls function-call items. `output` is the final
 * response's item list, updated as items finish.
 */
export class ItemWriter {
  private readonly blocks = new Map<number, Block>();
  private message?: { item: OutputItem; outputIndex: number; content: Array<Record<string, unknown>> };

  constructor(
    private readonly output: OutputItem[],
    private readonly newId: (prefix: string) => string,
    private readonly emit: Emit,
  ) {}

  private addItem(item: OutputItem): number {
    const outputIndex = this.output.length;
    this.output.push(item);
    this.emit('response.output_item.added', { output_index: outputIndex, item });
    return outputIndex;
  }

  private openMessage(): NonNullable<ItemWriter['message']> {
    if (this.message) return this.message;
    const content: Array<Record<string, unknown>> = [];
    const item = messageItem(this.newId('msg_'), [], 'in_progress');
    this.message = { item, outputIndex: this.addItem(item), content };
    return this.message;
  }

  /** Appends text (or refusal text) to the block at `index`, opening its content part first. */
  textDelta(index: number, kind: TextBlock['kind'], delta: string): void {
    let block = this.blocks.get(index);
    if (!block) block = this.openText(index, kind);
    if (block.kind !== 'text' && block.kind !== 'refusal') return;
    block.text += delta;
    const at = { item_id: block.itemId, output_index: block.outputIndex, content_index: block.contentIndex };
    if (block.kind === 'text') this.emit('response.output_text.delta', { ...at, delta, logprobs: [] });
    else this.emit('response.refusal.delta', { ...at, delta });
  }

  private openText(index: number, kind: TextBlock['kind']): TextBlock {
    const message = this.openMessage();
    const contentIndex = message.content.length;
    const part = kind === 'text' ? textContent('') : refusalContent('');
    message.content.push(part);
    const block: TextBlock = { kind, outputIndex: message.outputIndex, contentIndex, itemId: message.item.id, text: '' };
    this.blocks.set(index, block);
    this.emit('response.content_part.added', { item_id: block.itemId, output_index: block.outputIndex, content_index: contentIndex, part });
    return block;
  }

  private openThinking(index: number): ThinkingBlock {
    this.closeMessage('completed');
    const item = reasoningItem(this.newId('rs_'), '', undefined);
    const block: ThinkingBlock = { kind: 'thinking', outputIndex: this.addItem(item), itemId: item.id, text: '' };
    this.blocks.set(index, block);
    return block;
  }

  /** Thinking text streams as the reasoning item's first summary part, opened on the first text. */
  thinkingDelta(index: number, delta: string): void {
    const block = this.blocks.get(index) ?? this.openThinking(index);
    if (block.kind !== 'thinking' || delta === '') return;
    const at = { item_id: block.itemId, output_index: block.outputIndex, summary_index: 0 };
    if (block.text === '') this.emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
    block.text += delta;
    this.emit('response.reasoning_summary_text.delta', { ...at, delta });
  }

  /** The signature (or redacted data) becomes `encrypted_content`, sent with the item's `done` event. */
  thinkingSignature(index: number, signature: string): void {
    const block = this.blocks.get(index) ?? this.openThinking(index);
    if (block.kind === 'thinking') block.signature = signature;
  }

  toolStart(index: number, callId: string, name: string): void {
    this.closeMessage('completed');
    const item = functionCallItem(this.newId('fc_'), callId, name, '', 'in_progress');
    this.blocks.set(index, { kind: 'tool', outputIndex: this.addItem(item), itemId: item.id, callId, name, args: '' });
  }

  toolDelta(index: number, delta: string): void {
    const block = this.blocks.get(index);
    if (block?.kind !== 'tool') return;
    block.args += delta;
    this.emit('response.function_call_arguments.delta', { item_id: block.itemId, output_index: block.outputIndex, delta });
  }

  /** Closes the block at `index`: its done events, and for items other than messages the item itself. */
  stop(index: number): void {
    const block = this.blocks.get(index);
    if (!block) return;
    this.blocks.delete(index);
    if (block.kind === 'thinking') this.stopThinking(block);
    else if (block.kind === 'tool') this.stopTool(block);
    else this.stopText(block);
  }

  private stopText(block: TextBlock): void {
    const at = { item_id: block.itemId, output_index: block.outputIndex, content_index: block.contentIndex };
    const part = block.kind === 'text' ? textContent(block.text) : refusalContent(block.text);
    if (block.kind === 'text') this.emit('response.output_text.done', { ...at, text: block.text, logprobs: [] });
    else this.emit('response.refusal.done', { ...at, refusal: block.text });
    this.emit('response.content_part.done', { ...at, part });
    if (this.message?.item.id === block.itemId) this.message.content[block.contentIndex] = part;
  }

  private stopThinking(block: ThinkingBlock): void {
    const at = { item_id: block.itemId, output_index: block.outputIndex, summary_index: 0 };
    if (block.text !== '') {
      this.emit('response.reasoning_summary_text.done', { ...at, text: block.text });
      this.emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text: block.text } });
    }
    this.finishItem(block.outputIndex, reasoningItem(block.itemId, block.text, block.signature));
  }

  private stopTool(block: ToolBlock): void {
    const at = { item_id: block.itemId, output_index: block.outputIndex };
    this.emit('response.function_call_arguments.done', { ...at, name: block.name, arguments: block.args });
    this.finishItem(block.outputIndex, functionCallItem(block.itemId, block.callId, block.name, block.args));
  }

  private finishItem(outputIndex: number, item: OutputItem): void {
    this.output[outputIndex] = item;
    this.emit('response.output_item.done', { output_index: outputIndex, item });
  }

  /** Closes the open message item (and any of its parts still open). */
  private closeMessage(status: string): void {
    const message = this.message;
    if (!message) return;
    for (const [index, block] of [...this.blocks]) if (block.itemId === message.item.id) this.stop(index);
    this.message = undefined;
    this.finishItem(message.outputIndex, messageItem(message.item.id, message.content, status));
  }

  /** Closes everything still open, in block order, at the end of the reply. */
  closeAll(messageStatus: string): void {
    for (const index of [...this.blocks.keys()].sort((a, b) => a - b)) this.stop(index);
    this.closeMessage(messageStatus);
  }
}
