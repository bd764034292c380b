// The JavaScript clients, unchanged, against alloy serve: `node clients.mjs <base URL of /v1>`.
// Runs the rows of ../clients.json whose runner is "node", prints one line per row, and exits 1
// when a row does not do what the file says (works, or refused with its error).
import { readFileSync } from "node:fs";

import { createOpenAI } from "@ai-sdk/openai";
import { generateObject, generateText, jsonSchema, streamText, tool } from "ai";
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";

const base = process.argv[2];
const DEFAULT_TEXT = "Hello from the alloy emulator.";
const PROMPT = "Rate the film Up.";
const MESSAGES = [{ role: "user", content: PROMPT }];
const Rating = z.object({ title: z.string(), stars: z.number().int() });
const WEATHER = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    },
  },
};

const sdk = new OpenAI({ baseURL: base, apiKey: "a-caller-key", maxRetries: 0 });
const provider = createOpenAI({ baseURL: base, apiKey: "a-caller-key" });

function check(condition, what) {
  if (!condition) throw new Error(`expected ${what}`);
}

const DRIVERS = {
  "openai (npm): chat.completions.create": async () => {
    const reply = await sdk.chat.completions.create({ model: "support", messages: MESSAGES });
    check(reply.choices[0].message.content === DEFAULT_TEXT, "the emulator's text");
  },
  "openai (npm): chat.completions.create(stream: true)": async () => {
    const stream = await sdk.chat.completions.create({
      model: "open",
      messages: MESSAGES,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let deltas = 0;
    let usage = null;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta?.content;
      if (piece) {
        text += piece;
        deltas += 1;
      }
      usage = chunk.usage ?? usage;
    }
    check(text === DEFAULT_TEXT && deltas > 1, "the text in several deltas");
    check(usage && usage.total_tokens > 0, "usage in the last chunk");
  },
  "openai (npm): chat.completions.parse(zodResponseFormat)": async () => {
    const reply = await sdk.chat.completions.parse({
      model: "support",
      messages: MESSAGES,
      response_format: zodResponseFormat(Rating, "rating"),
    });
    const parsed = reply.choices[0].message.parsed;
    check(Rating.safeParse(parsed).success, "a parsed Rating");
  },
  "openai (npm): tools (a round trip)": async () => {
    const messages = [{ role: "user", content: "Weather in Paris?" }];
    const first = await sdk.chat.completions.create({
      model: "support",
      messages,
      tools: [WEATHER],
      tool_choice: "required",
    });
    const [call] = first.choices[0].message.tool_calls;
    check(call.function.name === "get_weather", "a get_weather call");
    JSON.parse(call.function.arguments);
    messages.push(first.choices[0].message, {
      role: "tool",
      tool_call_id: call.id,
      content: "Sunny in Paris.",
    });
    const second = await sdk.chat.completions.create({ model: "support", messages, tools: [WEATHER] });
    check(second.choices[0].message.content === DEFAULT_TEXT, "text after the tool result");
  },
  "openai (npm): responses.create": async () => {
    const answer = await sdk.responses.create({ model: "support", input: PROMPT });
    check(answer.output_text === DEFAULT_TEXT, "the emulator's text");
  },
  "Vercel AI SDK: generateText (Responses, the default)": async () => {
    const { text } = await generateText({ model: provider("support"), prompt: PROMPT, maxRetries: 0 });
    check(text === DEFAULT_TEXT, "the emulator's text");
  },
  "Vercel AI SDK: generateText (openai.chat)": async () => {
    const { text } = await generateText({
      model: provider.chat("support"),
      prompt: PROMPT,
      maxRetries: 0,
    });
    check(text === DEFAULT_TEXT, "the emulator's text");
  },
  "Vercel AI SDK: streamText": async () => {
    const result = streamText({ model: provider("open"), prompt: PROMPT, maxRetries: 0 });
    const pieces = [];
    for await (const piece of result.textStream) pieces.push(piece);
    check(pieces.join("") === DEFAULT_TEXT && pieces.length > 1, "the text in several pieces");
  },
  "Vercel AI SDK: generateObject": async () => {
    const { object } = await generateObject({
      model: provider("support"),
      schema: Rating,
      prompt: PROMPT,
      maxRetries: 0,
    });
    check(Rating.safeParse(object).success, "a Rating");
  },
};

const rows = JSON.parse(readFileSync(new URL("../clients.json", import.meta.url), "utf8")).filter(
  (row) => row.runner === "node",
);
let failed = 0;
for (const row of rows) {
  const name = `${row.client}: ${row.mode}`;
  const driver = DRIVERS[name];
  let outcome;
  try {
    if (!driver) throw new Error("no driver in clients.mjs");
    await driver();
    outcome = row.refused ? `expected a refusal (${row.error}), but it worked` : null;
  } catch (error) {
    const message = String(error?.message ?? error);
    outcome = row.refused && message.includes(row.error) ? null : message;
  }
  if (outcome === null) console.log(`ok    ${name}`);
  else {
    failed += 1;
    console.log(`FAIL  ${name}: ${outcome}`);
  }
}
const unknown = Object.keys(DRIVERS).filter((name) => !rows.some((r) => `${r.client}: ${r.mode}` === name));
for (const name of unknown) {
  failed += 1;
  console.log(`FAIL  ${name}: a driver with no row in clients.json`);
}
process.exit(failed ? 1 : 0);
