import { toEventSelector } from 'viem'
import { describe, expect, test } from 'vitest'
import { PROCESSED_REPORT_TOPIC } from '../chain/abi.ts'
import { implementationArtifact, protocolCode, protocolErrorsAbi } from './protocol-code.ts'
import { LAUNCH_VERSION, PROXY_CONTRACT, RELEASE_ACTIONS } from './protocol-releases.ts'

describe('protocolCode', () => {
  test('behavior: every implementation the releases name has creation code and an ABI in the fixtures', () => {
    const named = new Set<string>()
    for (const [proxy, version] of Object.entries(LAUNCH_VERSION)) {
      if (version)
        named.add(implementationArtifact(PROXY_CONTRACT[proxy as keyof typeof PROXY_CONTRACT], version))
    }
    for (const actions of Object.values(RELEASE_ACTIONS)) {
      for (const action of actions) {
        if (action.kind !== 'adminCall')
          named.add(implementationArtifact(PROXY_CONTRACT[action.proxy], action.version))
      }
    }
    expect(named.size).toBe(29 - 2) // every mainnet implementation artifact (the TUPProxy and Firewall aside)
    for (const artifact of [...named, 'TUPProxy', 'Firewall']) {
      const code = protocolCode(artifact)
      expect(code.creation.startsWith('0x60'), artifact).toBe(true)
      expect(code.abi.length, artifact).toBeGreaterThan(0)
    }
  })

  test('behavior: River 1.2.1 declares ProcessedConsensusLayerReport with the published topic0', () => {
    const event = protocolCode('RiverV1_Implementation_1_2_1').abi.find(
      (item) => item.type === 'event' && item.name === 'ProcessedConsensusLayerReport',
    )
    if (event?.type !== 'event') throw new Error('event missing')
    expect(toEventSelector(event)).toBe(PROCESSED_REPORT_TOPIC)
  })

  test('behavior: the errors of every protocol build are listed once each, River 1.x refusals among them', () => {
    const errors = protocolErrorsAbi()
    const keys = errors.map((e) =>
      e.type === 'error' ? `${e.name}(${e.inputs.map((i) => i.type).join(',')})` : '',
    )
    expect(new Set(keys).size).toBe(keys.length)
    expect(keys).toContain('TotalValidatorBalanceIncreaseOutOfBound(uint256,uint256,uint256,uint256)')
  })
})
