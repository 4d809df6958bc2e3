/**
 * What every fake upstream answers when a request asks for structured output in its provider's
 * own terms (OpenAI's and Azure's response_format, Anthropic's output_config.format, Gemini's
 * JSON response MIME type, Bedrock's outputConfig.textFormat): an instance of the weather schema
 * tests ask for, as the answer's text. A gateway that drops or garbles the request's format gets
 * the usual echo instead, which no client can parse as that schema.
 */
export const FAKE_STRUCTURED_ANSWER = { city: 'Paris', temperature_c: 21 } as const;

export const FAKE_STRUCTURED_TEXT = JSON.stringify(FAKE_STRUCTURED_ANSWER);
