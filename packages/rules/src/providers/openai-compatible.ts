import { NO_PRICES, defineProvider } from './descriptor.ts';

// Hosts that speak OpenAI's chat-completions format. The gateway serves them all with one
// pass-through adapter (services/gateway/src/providers/openai-compatible); none lists prices.

export const groq = defineProvider({
  id: 'groq',
  name: 'Groq',
  family: 'openai-compatible',
  authKinds: ['bearer'],
  env: { apiKey: 'GROQ_API_KEY' },
  defaultBaseUrl: 'https://api.groq.com/openai/v1',
  prices: NO_PRICES,
});

export const mistralAi = defineProvider({
  id: 'mistral-ai',
  name: 'Mistral AI',
  family: 'openai-compatible',
  authKinds: ['bearer'],
  env: { apiKey: 'MISTRAL_API_KEY' },
  defaultBaseUrl: 'https://api.mistral.ai/v1',
  prices: NO_PRICES,
});

export const togetherAi = defineProvider({
  id: 'together-ai',
  name: 'Together AI',
  family: 'openai-compatible',
  authKinds: ['bearer'],
  env: { apiKey: 'TOGETHER_API_KEY' },
  defaultBaseUrl: 'https://api.together.xyz/v1',
  prices: NO_PRICES,
});

export const deepSeek = defineProvider({
  id: 'deepseek',
  name: 'DeepSeek',
  family: 'openai-compatible',
  authKinds: ['bearer'],
  env: { apiKey: 'DEEPSEEK_API_KEY' },
  defaultBaseUrl: 'https://api.deepseek.com',
  prices: NO_PRICES,
});

export const fireworksAi = defineProvider({
  id: 'fireworks-ai',
  name: 'Fireworks AI',
  family: 'openai-compatible',
  authKinds: ['bearer'],
  env: { apiKey: 'FIREWORKS_API_KEY' },
  defaultBaseUrl: 'https://api.fireworks.ai/inference/v1',
  prices: NO_PRICES,
});

export const openRouter = defineProvider({
  id: 'openrouter',
  name: 'OpenRouter',
  family: 'openai-compatible',
  authKinds: ['bearer'],
  env: { apiKey: 'OPENROUTER_API_KEY' },
  defaultBaseUrl: 'https://openrouter.ai/api/v1',
  prices: NO_PRICES,
});

/** A local Ollama: no key unless a proxy in front of it wants one. */
export const ollama = defineProvider({
  id: 'ollama',
  name: 'Ollama',
  family: 'openai-compatible',
  authKinds: ['bearer', 'none'],
  env: { baseUrl: 'OLLAMA_BASE_URL' },
  defaultBaseUrl: 'http://localhost:11434/v1',
  prices: NO_PRICES,
});

/** A vLLM server: only its custom_host says where it is; a key when it was started with --api-key. */
export const vllm = defineProvider({
  id: 'vllm',
  name: 'vLLM',
  family: 'openai-compatible',
  authKinds: ['bearer', 'none'],
  env: { baseUrl: 'VLLM_BASE_URL' },
  defaultBaseUrl: undefined,
  prices: NO_PRICES,
});

/** Any other host of the format: only its custom_host says where it is. */
export const openAiCompatible = defineProvider({
  id: 'openai-compatible',
  name: 'OpenAI-compatible',
  family: 'openai-compatible',
  authKinds: ['bearer', 'none'],
  env: {},
  defaultBaseUrl: undefined,
  prices: NO_PRICES,
});
