export { runLoad, type LoadResult, type Target } from './load.ts';
export { measureStreams, type StreamResult } from './ttft.ts';
export { RssSampler, readRssKiB } from './rss.ts';
export { summarize, Samples, type Summary } from './stats.ts';
export { readProfile, summarizeProfile, profileMarkdown } from './profile.ts';
