import { TestLayer } from "../../src/layers/Test.js"
import { agentRuntimeContract } from "./AgentRuntimeContract.js"

agentRuntimeContract("scripted model, traces in memory", TestLayer)

agentRuntimeContract(
  "scripted model, traces in the workspace files (read back and decoded)",
  (options) => TestLayer({ ...options, traceStore: "file" })
)
