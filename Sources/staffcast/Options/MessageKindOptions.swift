import ArgumentParser

/// `--type` and `--priority` of whatever makes a message (`send`, `remind`, `template create`).
struct MessageKindOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("broadcast (default), alert or emergency.", valueName: "type")) var type: String?
    @Option(help: ArgumentHelp("low, normal (default), high or urgent.", valueName: "priority")) var priority: String?
}
