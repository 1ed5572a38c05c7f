import { publicReason } from '../http/errors.js';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import type { AuthInfo } from '../auth/pipeline.js';
import { internalConverse } from '../proxy/internal-call.js';
import type { Services } from '../services.js';
import type { IrMessage } from '../translate/ir.js';
import { replyText } from '../translate/util/reply-text.js';

/**
 * Router as an A2A agent (docs/agents.md): each message is answered by the model or combo of the
 * `agents.a2aModel` setting, through the executor as the caller (usage row with endpoint `a2a`, counted
 * against its key). The task's history is the conversation: a follow-up message on the same task continues it.
 */

export const A2A_AUTH_KEY = 'router.auth';

const SYSTEM = 'You are router, an assistant reachable over the Agent2Agent protocol. Answer the request helpfully and concisely.';

export const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' });

function agentMessage(taskId: string, contextId: string, text: string): Message {
  return { messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function textOf(m: Message): string {
  return m.parts
    .map((p) => (p.content?.$case === 'text' ? p.content.value : p.content?.$case === 'data' ? JSON.stringify(p.content.value) : ''))
    .filter(Boolean)
    .join('\n');
}

const statusEvent = (taskId: string, contextId: string, state: TaskState, message?: Message) =>
  AgentEvent.statusUpdate({ taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined });

export class RouterAgentExecutor implements AgentExecutor {
  /** Tasks being answered now; a cancel marks them so their late answer is dropped. */
  private readonly running = new Map<string, { canceled: boolean; contextId: string; bus: ExecutionEventBus }>();

  constructor(private readonly services: Services) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = ctx;
    const user = ctx.userMessage;
    const history = [...(ctx.task?.history ?? [])];
    if (!history.some((m) => m.messageId === user.messageId)) history.push(user);
    const task: Task = ctx.task
      ? { ...ctx.task, history }
      : { id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history, metadata: undefined };
    bus.publish(AgentEvent.task(task));
    const run = { canceled: false, contextId, bus };
    this.running.set(taskId, run);
    try {
      const auth = ctx.context.state.get(A2A_AUTH_KEY) as AuthInfo | undefined;
      const model = this.services.settings.get().agents.a2aModel;
      if (!auth || !model) {
        bus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_FAILED, agentMessage(taskId, contextId, 'router has no model for A2A: set the agents.a2aModel setting.')));
        return;
      }
      bus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_WORKING));
      const messages: IrMessage[] = history
        .map((m): IrMessage => ({ role: m.role === Role.ROLE_AGENT ? 'assistant' : 'user', parts: [{ type: 'text', text: textOf(m) }] }))
        .filter((m) => (m.parts[0] as { text: string }).text !== '');
      let answer: string;
      try {
        const r = await internalConverse(this.services, { endpoint: 'a2a', model, auth, system: SYSTEM, messages, timeoutMs: this.services.settings.get().requestDeadlineMs });
        answer = replyText(r.value);
      } catch (err) {
        if (run.canceled) return;
        const msg = publicReason(err).replace(/\s+/g, ' ').slice(0, 500);
        bus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_FAILED, agentMessage(taskId, contextId, msg)));
        return;
      }
      if (run.canceled) return;
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: randomUUID(), name: 'answer', description: '', parts: [textPart(answer)], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_COMPLETED, agentMessage(taskId, contextId, answer)));
    } finally {
      this.running.delete(taskId);
      bus.finished();
    }
  };

  /** Ids of the tasks this node is answering now. */
  runningTasks(): string[] {
    return [...this.running.keys()];
  }

  /**
   * Tasks canceled elsewhere (another node of the cluster stored the cancel): their answer is dropped and
   * their caller here is told they are canceled.
   */
  canceledElsewhere(taskIds: readonly string[]): void {
    for (const taskId of taskIds) {
      const run = this.running.get(taskId);
      if (!run || run.canceled) continue;
      run.canceled = true;
      run.bus.publish(statusEvent(taskId, run.contextId, TaskState.TASK_STATE_CANCELED));
    }
  }

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const run = this.running.get(taskId);
    if (run) run.canceled = true;
    // The upstream call, when one is in flight, runs to its end (its usage is recorded); its answer is dropped.
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined }));
  };
}
