#!/usr/bin/env node
// Runs the TypeScript CLI directly (tsx), so `npx lsreport` works right after `npm ci`.
import { register } from 'tsx/esm/api'

register()
await import('../cli/main.ts')
