/**
 * A heuristic for prompt injection: it looks for phrasings known from injection attempts
 * (ignore the previous instructions, reveal the system prompt, role-play jailbreaks, forged
 * chat-format role markers, …), each with a weight, and scores the text as the chance that at
 * least one of the found signals is real: 1 - (1 - w1) (1 - w2) …. It is a heuristic, not a
 * classifier: it misses reworded or encoded attempts and can flag text that discusses them.
 * Every pattern is bounded, so scoring is linear in the text.
 */

interface Signal {
  pattern: RegExp;
  weight: number;
  /** What the phrasing does, as the explanation says it. */
  reason: string;
}

const SIGNALS: readonly Signal[] = [
  {
    pattern:
      /\b(?:ignore|disregard|forget|skip|override|overrule)\b[^.;\n]{0,30}?\b(?:previous|prior|above|earlier|preceding|all|any|your|these|those|system|initial|original)\b[^.;\n]{0,15}?\b(?:instructions?|prompts?|rules|directions|guidelines|context|messages?|commands?)\b/i,
    weight: 0.9,
    reason: 'asks to ignore earlier instructions',
  },
  {
    pattern:
      /\b(?:reveal|show|print|repeat|output|display|tell me|leak|share|disclose|what (?:is|are|was|were))\b[^.\n]{0,30}?\b(?:system prompt|system message|initial (?:prompt|instructions)|hidden (?:prompt|instructions)|original instructions|instructions you were given|developer message)/i,
    weight: 0.8,
    reason: 'asks for the system prompt',
  },
  {
    pattern:
      /\byou are (?:now )?(?:DAN|in (?:developer|god|jailbreak|unrestricted|unfiltered) mode)\b|\bdo anything now\b|\b(?:developer|god) mode (?:enabled|on|activated)\b/i,
    weight: 0.8,
    reason: 'uses a role-play jailbreak marker',
  },
  {
    pattern:
      /\b(?:pretend|act|behave|roleplay|role-play|respond)\b[^.\n]{0,40}?\b(?:no|without|free of|free from|unbound by|ignoring)\b[^.\n]{0,20}?\b(?:restrictions?|limits?|limitations|filters?|rules|guidelines|censorship|polic(?:y|ies)|morals|ethics)\b/i,
    weight: 0.7,
    reason: 'asks to act without restrictions',
  },
  {
    pattern:
      /\b(?:bypass|disable|turn off|switch off|override|circumvent)\b[^.\n]{0,20}?\b(?:safety|content|moderation|security)\b[^.\n]{0,10}?\b(?:filters?|polic(?:y|ies)|guidelines|settings|checks?|measures|rules)\b/i,
    weight: 0.7,
    reason: 'asks to bypass safety measures',
  },
  {
    pattern:
      /(?:^|\n)[ \t]{0,8}(?:#{1,3}[ \t]{0,4})?(?:system|assistant)[ \t]{0,4}:|<\|im_start\|>|<\|(?:system|endoftext)\|>|\[\/?INST\]|<<\/?SYS>>/i,
    weight: 0.5,
    reason: 'embeds chat-format role markers',
  },
  {
    pattern: /\b(?:new|updated|real|actual|true) (?:system )?instructions?[ \t]{0,4}:/i,
    weight: 0.5,
    reason: 'announces new instructions',
  },
  {
    pattern: /\bjailbr(?:eak|oken|eaking)\b/i,
    weight: 0.4,
    reason: 'mentions jailbreaking',
  },
  {
    pattern: /\bfrom now on,? you (?:will|must|shall|are)\b/i,
    weight: 0.3,
    reason: 'redefines the assistant from now on',
  },
];

export interface InjectionScore {
  /** From 0 (no signal) to 1. */
  score: number;
  /** What the found signals do, strongest first. */
  reasons: string[];
}

/** Scores `text` for prompt injection (see the module comment: a heuristic). */
export function scorePromptInjection(text: string): InjectionScore {
  let clear = 1;
  const found: Signal[] = [];
  for (const signal of SIGNALS) {
    if (signal.pattern.test(text)) {
      clear *= 1 - signal.weight;
      found.push(signal);
    }
  }
  return { score: Math.round((1 - clear) * 1000) / 1000, reasons: found.map((signal) => signal.reason) };
}
