import { existsSync } from 'node:fs'
import { spawnSync } from 'bun'

/**
 * The Prometheus text format read by the official Python client's parser (Debian's `python3-prometheus-client`,
 * which .ci/run installs), not by a regular expression of ours. Without it the tests that need it skip, except under
 * `CI=true`, where they fail, as with chromium and PostgreSQL.
 */

/** A sample as the parser reads it. */
export interface ParsedSample {
  name: string
  labels: Record<string, string>
  value: number
}

/** A metric family as the parser reads it: `name` without a counter's `_total`, as the client library gives it. */
export interface ParsedFamily {
  name: string
  type: string
  help: string
  samples: ParsedSample[]
}

// Debian's python3 first: another python3 earlier on PATH (pyenv's) does not see Debian's packages.
const PYTHONS = ['/usr/bin/python3', 'python3']
const PROBE = 'from prometheus_client.parser import text_string_to_metric_families'

/** A python3 that has the parser, or undefined. */
function pythonWithParser(): string | undefined {
  for (const python of PYTHONS) {
    if (python.startsWith('/') && !existsSync(python)) continue
    try {
      if (spawnSync([python, '-c', PROBE], { stdout: 'ignore', stderr: 'ignore' }).exitCode === 0) return python
    } catch {}
  }
  return undefined
}

const python = pythonWithParser()

/** Under CI the parser must be there: throws there when it is not; elsewhere returns whether to skip, saying why. */
export function skipWithoutPrometheusParser(what: string): boolean {
  if (python) return false
  const why = 'the Prometheus text parser is not installed (apt-get install -y python3-prometheus-client)'
  if (process.env.CI === 'true') throw new Error(`${what} must run in CI, but ${why}`)
  console.warn(`\n!!! SKIPPING ${what}: ${why}. In CI this fails.\n`)
  return true
}

const SCRIPT = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
families = []
for family in text_string_to_metric_families(sys.stdin.read()):
    samples = [{"name": s.name, "labels": s.labels, "value": repr(float(s.value))} for s in family.samples]
    families.append({"name": family.name, "type": family.type, "help": family.documentation, "samples": samples})
print(json.dumps(families))
`

/** Parses `text` with the Python client's parser; throws with the parser's error when the text is not valid. */
export function parsePrometheusText(text: string): ParsedFamily[] {
  if (!python) throw new Error('no Prometheus text parser here (see skipWithoutPrometheusParser)')
  const run = spawnSync([python, '-c', SCRIPT], { stdin: Buffer.from(text), stdout: 'pipe', stderr: 'pipe' })
  if (run.exitCode !== 0) throw new Error(`the parser refused the text: ${run.stderr.toString()}`)
  const families = JSON.parse(run.stdout.toString()) as (Omit<ParsedFamily, 'samples'> & {
    samples: (Omit<ParsedSample, 'value'> & { value: string })[]
  })[]
  return families.map((family) => ({
    ...family,
    samples: family.samples.map((sample) => ({
      ...sample,
      value: sample.value === 'inf' ? Number.POSITIVE_INFINITY : Number(sample.value),
    })),
  }))
}
