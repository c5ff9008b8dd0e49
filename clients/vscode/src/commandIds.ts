/**
 * The palette command ids. `package.json` contributes exactly these (a unit test checks), and
 * `commands.ts` must implement every one (the compiler checks).
 *
 * Pure: no `vscode` import.
 */

export const COMMAND_IDS = [
  'agentLs.runTask',
  'agentLs.planTask',
  'agentLs.runSkill',
  'agentLs.reviewFile',
  'agentLs.showInstructions',
  'agentLs.showContext',
  'agentLs.showMcpServers',
  'agentLs.cancel',
  'agentLs.showProposal',
  'agentLs.applyProposal',
  'agentLs.discardProposal',
  'agentLs.showTranscript',
  'agentLs.setApiKey',
  'agentLs.restartServer',
] as const;

export type CommandId = (typeof COMMAND_IDS)[number];
