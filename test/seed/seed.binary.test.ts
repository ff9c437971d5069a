import { afterEach, beforeAll, describe, expect, test } from 'bun:test'
import legends from '../../data/legends.json' with { type: 'json' }
import { ensureBinary, type RunningBinary, removeDir, runBinary, startBinary, tempDir } from '../support/binary.ts'

// The executable is started from a fresh temporary directory, never the project's, to prove the catalogue is
// embedded in it rather than read from ./data at run time.
let dir: string
let running: RunningBinary | undefined

beforeAll(() => ensureBinary(), 300_000)

afterEach(async () => {
  await running?.stop()
  running = undefined
  removeDir(dir)
})

const start = async (...args: string[]) => {
  dir = tempDir()
  running = await startBinary(['--port', '0', '--data', `${dir}/db.json`, '--log', 'off', ...args], { cwd: dir })
  return running.url
}

/** Every item of a paginated list, following `meta.next`. */
async function all<T>(base: string, path: string): Promise<T[]> {
  const items: T[] = []
  for (let next: string | null = `${path}?limit=100`; next; ) {
    const response = await fetch(`${base}${next}`)
    expect(response.status).toBe(200)
    const page = (await response.json()) as { data: T[]; meta: { next: string | null } }
    items.push(...page.data)
    next = page.meta.next
  }
  return items
}

interface Listed {
  id: number
  name: string
  image?: string
}

describe('the executable with --seed, started from another directory', () => {
  test('serves every artist of the catalogue with all their albums, and every image as SVG', async () => {
    const url = await start('--seed')
    const artists = await all<Listed & { band?: string }>(url, '/api/v1/artists')
    expect(artists.map((artist) => artist.name)).toEqual(legends.artists.map((artist) => artist.name))
    const images: string[] = []
    for (const [i, artist] of artists.entries()) {
      const albums = await all<Listed & { year: number }>(url, `/api/v1/artists/${artist.id}/albums`)
      expect(albums.map(({ name, year }) => ({ name, year }))).toEqual(
        (legends.artists[i]?.albums ?? []).map(({ name, year }) => ({ name, year })),
      )
      images.push(artist.image as string, ...albums.map((album) => album.image as string))
    }
    expect(images).toHaveLength(32 + 307)
    const responses = await Promise.all(images.map((image) => fetch(`${url}${image}`)))
    const served = await Promise.all(
      responses.map(async (response) => [
        response.status,
        response.headers.get('content-type'),
        (await response.text()).slice(0, 5),
      ]),
    )
    expect(new Set(served.map((each) => each.join(' ')))).toEqual(new Set(['200 image/svg+xml; charset=utf-8 <svg ']))
  })

  test('gives the same ids on every run', async () => {
    const first = await all<Listed>(await start('--seed'), '/api/v1/artists/7/albums')
    await running?.stop()
    removeDir(dir)
    const second = await all<Listed>(await start('--seed'), '/api/v1/artists/7/albums')
    expect(second).toEqual(first)
    expect(first.map((album) => album.name)).toEqual(legends.artists[6]?.albums.map((album) => album.name) ?? [])
  })

  test('leaves a store that holds data alone on the next start, and says so', async () => {
    await start('--seed')
    await running?.stop()
    running = await startBinary(['--port', '0', '--data', `${dir}/db.json`, '--seed', '--log', 'pretty'], { cwd: dir })
    const artists = await all<Listed>(running.url, '/api/v1/artists')
    expect(artists).toHaveLength(32)
    await running.stop()
    expect(await running.stderr()).toContain(
      'not seeding: the store was written before (--seed fills only a new store)',
    )
  })
})

describe('the executable with --seed=FILE', () => {
  test('loads a fixture by a path relative to where it starts', async () => {
    dir = tempDir()
    const fixture = { artists: [{ name: 'Fixture', albums: [{ name: 'Uno', year: 2001 }] }] }
    await Bun.write(`${dir}/fixture.json`, JSON.stringify(fixture))
    running = await startBinary(['--port', '0', '--data', ':memory:', '--seed=fixture.json', '--log', 'off'], {
      cwd: dir,
    })
    expect(await all<Listed>(running.url, '/api/v1/artists')).toStrictEqual([
      { id: 1, name: 'Fixture', image: '/covers/artists/1.svg' },
    ])
    expect((await fetch(`${running.url}/covers/albums/1.svg`)).headers.get('content-type')).toStartWith('image/svg+xml')
  })

  test('reads the editorial sources and notes of a file, and serves none of them', async () => {
    dir = tempDir()
    const sources = ['https://example.com/one', 'Two, a book']
    const fixture = {
      artists: [
        {
          name: 'Fixture',
          description: 'Sourced.',
          sources,
          note: 'An editor’s note.',
          albums: [{ name: 'Uno', year: 2001, sources, note: 'Checked twice.' }],
        },
      ],
    }
    await Bun.write(`${dir}/fixture.json`, JSON.stringify(fixture))
    running = await startBinary(['--port', '0', '--data', ':memory:', '--seed=fixture.json', '--log', 'off'], {
      cwd: dir,
    })
    const answers = await Promise.all(
      ['/api/v1/artists', '/api/v1/artists/1', '/api/v1/artists/1/albums', '/api/v1/artists?q=Fixture'].map(
        async (path) => [path, await (await fetch(`${running?.url}${path}`)).text()] as const,
      ),
    )
    for (const [path, text] of answers) {
      expect(text, path).toContain(path.endsWith('/albums') ? 'Uno' : 'Fixture')
      expect(text, path).not.toMatch(/sources|note|example\.com|editor|Checked twice/)
    }
    expect(JSON.parse(answers[1]?.[1] ?? 'null')).toStrictEqual({
      id: 1,
      name: 'Fixture',
      description: 'Sourced.',
      image: '/covers/artists/1.svg',
    })
  })

  test('stops with exit code 2 and names the file, the JSON pointer and the problem of a bad one', async () => {
    dir = tempDir()
    await Bun.write(
      `${dir}/bad.json`,
      JSON.stringify({ artists: [{ name: 'A', albums: [{ name: 'B', year: 1850 }] }] }),
    )
    const { code, stdout, stderr } = await runBinary(['--port', '0', '--data', ':memory:', '--seed=bad.json'], {
      cwd: dir,
    })
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toStartWith('rock-legends: bad.json is not a valid catalogue:\n')
    expect(stderr).toContain('\nbad.json: /artists/0/albums/0/year: must be an integer from 1900 to ')
    expect(stderr).not.toContain('    at ')
  })
})
