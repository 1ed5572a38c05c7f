import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { SkillCatalog } from './catalog.js';

/**
 * Serves the catalog to MCP clients: each skill as a prompt (`skill-<name>`, its instructions) and its
 * SKILL.md as a resource (`skill://<name>/SKILL.md`), registered on every new session's server.
 */
export function registerSkills(server: McpServer, catalog: SkillCatalog): void {
  for (const s of catalog.list()) {
    server.registerPrompt(`skill-${s.name}`, { title: s.name, description: s.description }, () => {
      const skill = catalog.get(s.name);
      return { messages: [{ role: 'user', content: { type: 'text', text: skill ? `# Skill: ${skill.name}\n${skill.description}\n\n${skill.body}` : `The skill '${s.name}' was removed.` } }] };
    });
    const uri = `skill://${s.name}/SKILL.md`;
    server.registerResource(`skill-${s.name}`, uri, { title: s.name, description: s.description, mimeType: 'text/markdown' }, () => {
      const skill = catalog.get(s.name);
      const text = skill ? `---\nname: ${skill.name}\ndescription: ${JSON.stringify(skill.description)}\n---\n\n${skill.body}\n` : '';
      return { contents: [{ uri, mimeType: 'text/markdown', text }] };
    });
  }
}
