import type { RequestStage } from '../proxy/stages.js';
import type { SkillCatalog } from './catalog.js';

/** Before memory injection (50): skills are standing instructions, memories the conversation's facts. */
export const SKILLS_STAGE_ORDER = 40;

/**
 * Injects the instructions of the skills enabled for the calling API key as a system text, before the
 * client's own system prompt. Requests of keys without skills never see the stage (one Map walk).
 */
export function skillsStage(catalog: SkillCatalog): RequestStage {
  return {
    name: 'skills',
    wants: (ctx) => ctx.auth.key !== undefined && catalog.hasSkillsFor(ctx.auth.key.id),
    onRequest(request, ctx) {
      const text = catalog.instructionsFor(ctx.auth.key!.id);
      if (!text) return;
      ctx.notes.skills = true;
      return { ...request, system: [{ type: 'text', text: `You can use these skills.\n\n${text}` }, ...request.system] };
    },
  };
}
