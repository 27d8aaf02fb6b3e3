/** `tracklet send`: placeholder until the SDK's command is written. Returns the exit code. */
export async function runSend(_args: string[]): Promise<number> {
  throw new Error('tracklet send is not built yet')
}
