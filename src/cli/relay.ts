/** `tracklet relay`: placeholder until the relay's command is written. Returns the exit code. */
export async function runRelay(_args: string[]): Promise<number> {
  throw new Error('tracklet relay is not built yet')
}
