import Foundation
import PackagePlugin

/// Writes `BuildCommit.swift` for the target that uses it: the git commit
/// the package is built from (twelve hex digits, `+changes` when tracked
/// files differ from it, `unknown` outside a git checkout), which
/// `--version` prints. It runs before every build and rewrites the file
/// only when the commit changed, so an unchanged tree compiles nothing
/// again.
@main
struct BuildCommitPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "Generated")
        let script = #"""
            set -u
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
            if [ "$commit" != unknown ] && [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
                commit="$commit+changes"
            fi
            mkdir -p "$2"
            file="$2/BuildCommit.swift"
            text="/// The git commit this program was built from (the BuildCommit plugin writes it at build time).
            enum BuildCommit {
                /// Twelve hex digits, with +changes when tracked files differed; unknown outside a checkout.
                static let id = \"$commit\"
            }"
            if [ ! -f "$file" ] || [ "$(cat "$file")" != "$text" ]; then printf '%s\n' "$text" > "$file"; fi
            """#
        return [
            .prebuildCommand(
                displayName: "Noting the commit built from",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "sh", context.package.directoryURL.path, output.path],
                outputFilesDirectory: output)
        ]
    }
}
