import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            '{common,engine,jobs,api,chain,db,devnet,cli,platform,metrics,bench,fixtures}/**/*.test.ts',
          ],
          testTimeout: 30_000,
          setupFiles: ['fixtures/property-setup.ts'],
          sequence: { groupOrder: 0 },
          // the files of a worker share its loaded modules: a fresh module graph per file cost ~2.7 s of imports a
          // file (the phase took 133 s for 54 s of tests, 56 s without); no test changes process-wide state
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          setupFiles: ['fixtures/property-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: 'forks',
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          // as the unit project: 421 s for the phase against ~535 s with a fresh fork per file
          isolate: false,
        },
      },
    ],
  },
})
