import type { IrStreamEvent } from '../../ir.js';
import { reasoningPart } from './decode-response.js';

type Item = Record<string, unknown>;

interface Current {
  index: number;
  /** Text blocks are keyed by `output_index:content_index`, thinking blocks by output index. */
  key: string;
}

interface Reasoning {
  index?: number;
  text: string;
  /** A later summary part starts: separate it from the previous one like the non-stream decoder does. */
  separate: boolean;
}

/**
 * Turns Responses item/part events into IR blocks with increasing indexes. Only one text or thinking block
 * is open at a time (opening one closes the previous); function calls each keep their own block until
 * their item is done, so parallel calls may overlap as IR allows.
 */
export class BlockTracker {
  out: IrStreamEvent[] = [];
  sawToolCall = false;
  private next = 0;
  private current?: Current;
  private readonly texts = new Map<string, 'open' | 'done'>();
  private readonly messagesWithText = new Set<number>();
  private readonly reasoning = new Map<number, Reasoning>();
  private readonly tools = new Map<number, { index: number; sawArgs: boolean }>();

  /** True once any block was opened (the reply had some content). */
  get opened(): boolean {
    return this.next > 0;
  }

  take(): IrStreamEvent[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private open(key: string): number {
    this.closeCurrent();
    const index = this.next++;
    this.current = { index, key };
    return index;
  }

  private closeCurrent(): void {
    if (this.current) this.out.push({ type: 'block_stop', index: this.current.index });
    this.current = undefined;
  }

  textDelta(key: string, oi: number, kind: 'text' | 'refusal', delta: string): void {
    if (delta === '' || this.texts.get(key) === 'done') return;
    const index = this.current?.key === key ? this.current.index : this.open(key);
    this.texts.set(key, 'open');
    this.messagesWithText.add(oi);
    this.out.push(kind === 'text' ? { type: 'text_delta', index, text: delta } : { type: 'refusal_delta', index, text: delta });
  }

  /** Closes a text block; its whole text is emitted here when no delta carried it. */
  textDone(key: string, oi: number, kind: 'text' | 'refusal', text: string): void {
    const state = this.texts.get(key);
    if (state === 'done') return;
    if (state === undefined) this.textDelta(key, oi, kind, text);
    if (this.current?.key === key) this.closeCurrent();
    this.texts.set(key, 'done');
    this.messagesWithText.add(oi);
  }

  private reasoningAt(oi: number): Reasoning {
    let r = this.reasoning.get(oi);
    if (!r) this.reasoning.set(oi, (r = { text: '', separate: false }));
    return r;
  }

  private openThinking(oi: number, r: Reasoning): number {
    if (r.index === undefined || this.current?.index !== r.index) r.index = this.open(`r${oi}`);
    return r.index;
  }

  summaryPart(oi: number, summaryIndex: number): void {
    const r = this.reasoningAt(oi);
    if (summaryIndex > 0 && r.text !== '') r.separate = true;
  }

  thinkingDelta(oi: number, delta: string): void {
    if (delta === '') return;
    const r = this.reasoningAt(oi);
    const index = this.openThinking(oi, r);
    const text = r.separate ? `\n\n${delta}` : delta;
    r.separate = false;
    r.text += text;
    this.out.push({ type: 'thinking_delta', index, text });
  }

  itemAdded(oi: number, item: Item): void {
    if (item.type === 'reasoning') this.reasoningAt(oi);
    if (item.type !== 'function_call') return;
    this.closeCurrent();
    const index = this.next++;
    this.tools.set(oi, { index, sawArgs: false });
    this.sawToolCall = true;
    this.out.push({ type: 'tool_call_start', index, id: String(item.call_id ?? item.id ?? ''), name: String(item.name ?? '') });
    if (typeof item.arguments === 'string') this.toolDelta(oi, item.arguments);
  }

  itemDone(oi: number, item: Item): void {
    if (item.type === 'function_call') this.toolDone(oi, item);
    else if (item.type === 'reasoning') this.reasoningDone(oi, item);
    else if (item.type === 'message' && !this.messagesWithText.has(oi)) this.messageDone(oi, item);
  }

  private toolDone(oi: number, item: Item): void {
    if (!this.tools.has(oi)) this.itemAdded(oi, { ...item, arguments: '' });
    const tool = this.tools.get(oi);
    if (!tool) return;
    if (!tool.sawArgs && typeof item.arguments === 'string') this.toolDelta(oi, item.arguments);
    this.out.push({ type: 'block_stop', index: tool.index });
    this.tools.delete(oi);
  }

  /** The reasoning item's `encrypted_content` arrives only with the finished item: it is the signature. */
  private reasoningDone(oi: number, item: Item): void {
    const r = this.reasoningAt(oi);
    const part = reasoningPart(item);
    if (part?.type === 'thinking') {
      if (r.text === '' && part.text !== '') this.thinkingDelta(oi, part.text);
      if (part.signature) this.out.push({ type: 'thinking_signature', index: this.openThinking(oi, r), signature: part.signature, issuer: 'openai' });
    }
    if (r.index !== undefined && this.current?.index === r.index) this.closeCurrent();
    this.reasoning.delete(oi);
  }

  /** A message item that arrived whole, without part events. */
  private messageDone(oi: number, item: Item): void {
    const content = Array.isArray(item.content) ? item.content : [];
    content.forEach((c: Item, i) => {
      const key = `${oi}:${i}`;
      if (c.type === 'output_text') this.textDone(key, oi, 'text', String(c.text ?? ''));
      else if (c.type === 'refusal') this.textDone(key, oi, 'refusal', String(c.refusal ?? ''));
    });
  }

  toolDelta(oi: number, delta: string): void {
    const tool = this.tools.get(oi);
    if (!tool || delta === '') return;
    tool.sawArgs = true;
    this.out.push({ type: 'tool_call_delta', index: tool.index, argumentsDelta: delta });
  }

  toolArgumentsDone(oi: number, args: string): void {
    const tool = this.tools.get(oi);
    if (tool && !tool.sawArgs) this.toolDelta(oi, args);
  }

  /** Closes every open block (the response is complete). */
  closeAll(): void {
    this.closeCurrent();
    for (const tool of this.tools.values()) this.out.push({ type: 'block_stop', index: tool.index });
    this.tools.clear();
  }
}
