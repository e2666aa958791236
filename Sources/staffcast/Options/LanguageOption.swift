import ArgumentParser
import Foundation
import StaffcastClient

/// `--lang` of the commands that talk to staff in their language (`join`, `watch`).
struct LanguageOption: ParsableArguments {
    @Option(help: ArgumentHelp("Language: en or tr (default: from LC_ALL, LC_MESSAGES or LANG).", valueName: "lang"))
    var lang: String?

    /// The staff texts in --lang, else the language of the locale's environment variables.
    func strings() throws -> Strings {
        Strings(try Language.choose(flag: lang, environment: ProcessInfo.processInfo.environment))
    }
}
