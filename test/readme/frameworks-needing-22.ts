/**
 * What npm warns needs Node 22 when the published packages, with the frameworks they ask for,
 * install on Node 20: the frameworks whose current majors need it, with the packages
 * of theirs that say so. openai 7 (under the OpenAI Agents SDK); the Google Gen AI SDK 3; Mastra
 * (`@mastra/core` and `@mastra/schema-compat` ask for 22.13, and the AI SDK 7 providers it brings,
 * `@ai-sdk/provider` and `@ai-sdk/provider-utils`, for 22). Their bridges are tested on Node 20
 * too; nothing else may ask for another Node.
 */
export const FRAMEWORKS_NEEDING_22 = [
  '@ai-sdk/provider',
  '@ai-sdk/provider-utils',
  '@google/genai',
  '@mastra/core',
  '@mastra/schema-compat',
  'openai',
];

/**
 * What npm warns needs Node 22 when the repository itself installs on Node 20: the frameworks
 * above, and the AI SDK 7 (`ai` and its `@ai-sdk/gateway`), on which the repository tests the AI
 * SDK bridge beside `ai` 6 (its dev dependency `ai-v7`).
 */
export const REPOSITORY_NEEDING_22 = [...FRAMEWORKS_NEEDING_22, '@ai-sdk/gateway', 'ai'].sort();
