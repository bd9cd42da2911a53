// The README's example, type-checked by `npm run typecheck` (make ts-client): a call, a batch
// and a group stream, each typed from the OpenAPI documents. Run it against `make run` with
// `npm run example` (examples/run-quickstart.ts), or paste it into a project that depends on
// this package.
import { createYardstick, YardstickError } from "../src/index.js";

const yardstick = createYardstick({
  scoring: "http://127.0.0.1:8080", // make run's scoring service
  forecast: "http://127.0.0.1:8081", // and its forecast service
  clientId: "demo",
  clientSecret: "demo-secret",
});

export async function quickstart(): Promise<void> {
  // A typed call: the path, the body and the answer come from the scoring document.
  const { data, error } = await yardstick.scoring.POST("/api/score/items/idsWithResults/standard", {
    body: { items: [{ id: "L000100", result: 1 }, { id: "L000200", result: 0 }, { id: "L000300", result: 1 }] },
  });
  if (error) {
    throw new Error(`${error.exceptionType}: ${error.additionalInfo}`);
  }
  console.log(data.ability, data.abilityDisplay, data.uncertainty);

  // A field the contract does not have is a compile error, as it is a 400 at run time.
  await yardstick.forecast.POST("/api/forecast/reading", {
    // @ts-expect-error: priorAbilty is not a field of ForecastRequest
    body: { priorAbilty: 640, priorUncertainty: 70, testUncertainty: 32.5, elapsedDays: 180, cutLevels: [500, 650, 800] },
  });

  // A batch: records in (any iterable or async iterable, read as the service takes them),
  // answers out in input order, then the summary.
  async function* records() {
    for (let i = 0; i < 3; i++) {
      yield { id: `student-${i}`, path: "/api/score/items/idsWithResults/standard", body: { items: [{ id: "L000001", result: i % 2 }] } };
    }
  }
  try {
    for await (const line of yardstick.scoring.stream("/api/score/batch", records())) {
      if ("summary" in line) console.log("done:", line.summary.ok, "of", line.summary.records);
      else if ("id" in line) console.log(line.id, line.status, line.body);
      else if ("end" in line) console.log("ended, rights gone:", line.end.status, line.end.body.additionalInfo);
      else console.log("line", line.line, "refused:", line.body.additionalInfo);
    }
  } catch (e) {
    if (e instanceof YardstickError) console.log("the stream was refused:", e.status, e.body?.additionalInfo);
    throw e;
  }

  // A group forecast stream: the settings line, then one student a line (object or array).
  const lines = [{ testUncertainty: 32.5, cutLevels: [500, 650, 800] }, { priorAbility: 640, priorUncertainty: 70, elapsedDays: 180 }, [420, 55, 90]];
  for await (const line of yardstick.forecast.stream("/api/forecast/reading/group/stream", lines)) {
    if ("group" in line) console.log("group:", line.group?.groupAbility);
    else if ("ability" in line) console.log("student:", line.ability, line.probabilities);
  }
}
