import LodestarCLI

#if canImport(Glibc)
import Glibc
#endif

TerminationSignals.install()
let context = CommandContext(
    standardOutput: FileDescriptorSink.standardOutput, standardError: FileDescriptorSink.standardError,
    shouldStop: { TerminationSignals.requested })
exit(LodestarCommand.main(arguments: Array(CommandLine.arguments.dropFirst()), context: context))
