// One round trip through signoff's /agui with the npm @ag-ui/client HttpAgent:
// run 1 gets the pending requests as tool calls and interrupts; run 2 answers the first
// interrupt with an edit (resume entry), cancels the others, and gets the result. Then a
// second page in the way of CopilotKit's useHumanInTheLoop: runs that end with the calls left
// for the page (outcome "tool_calls"), answered by a tool message, as respond("denied") does.
// Usage: SIGNOFF_URL=... SIGNOFF_TOKEN=... node round_trip.mjs '<edited args JSON>'
import { HttpAgent } from "@ag-ui/client";

const agent = new HttpAgent({
  url: `${process.env.SIGNOFF_URL}/agui`,
  headers: { Authorization: `Bearer ${process.env.SIGNOFF_TOKEN}` },
  threadId: "node-page",
});
const edited = JSON.parse(process.argv[2]);
const seen = [];
const subscriber = { onEvent: ({ event }) => { seen.push(event.type); } };

await agent.runAgent({}, subscriber);
const interrupts = agent.pendingInterrupts;
const calls = agent.messages.flatMap((message) => message.toolCalls ?? []);

const [first, ...others] = interrupts;
const resume = [
  { interruptId: first.id, status: "resolved", payload: { approved: true, editedArgs: edited, reason: "from node" } },
  ...others.map((interrupt) => ({ interruptId: interrupt.id, status: "cancelled" })),
];
const second = await agent.runAgent({ resume }, subscriber);

const page = new HttpAgent({
  url: `${process.env.SIGNOFF_URL}/agui`,
  headers: { Authorization: `Bearer ${process.env.SIGNOFF_TOKEN}` },
  threadId: "node-hitl-page",
});
const forwardedProps = { signoff: { outcome: "tool_calls" } };
let leftForPage = [];
await page.runAgent({ forwardedProps }, {
  onRunFinishedEvent: ({ outcome, pendingToolCallIds }) => { leftForPage = outcome === "success" ? pendingToolCallIds : []; },
});
for (const toolCallId of leftForPage) {
  page.addMessage({ id: `answer-${toolCallId}`, role: "tool", toolCallId, content: "denied" });
}
const answered = await page.runAgent({ forwardedProps });

console.log(JSON.stringify({
  leftForPage,
  pageResults: answered.newMessages.filter((message) => message.role === "tool").map((message) => ({
    toolCallId: message.toolCallId,
    content: JSON.parse(message.content),
  })),
  events: seen,
  interrupts: interrupts.map((interrupt) => ({ id: interrupt.id, reason: interrupt.reason, expiresAt: interrupt.expiresAt })),
  calls: calls.map((call) => ({ id: call.id, name: call.function.name, args: JSON.parse(call.function.arguments) })),
  results: second.newMessages.filter((message) => message.role === "tool").map((message) => ({
    toolCallId: message.toolCallId,
    content: JSON.parse(message.content),
  })),
  pendingAfter: agent.pendingInterrupts.map((interrupt) => interrupt.id),
}));
