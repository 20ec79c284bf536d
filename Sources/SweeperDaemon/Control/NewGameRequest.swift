import SweeperControl
import SweeperGame

extension Commands.New.Arguments {
    /// The parameters, seed and question-mark choice of a `new` request;
    /// what it leaves out comes from this device's `defaults` (a size from a
    /// request replaces the default size whole).
    func game(defaults: Commands.New.Arguments) throws -> (GameParameters, UInt64, Bool) {
        var a = self
        if a.preset == nil && a.width == nil && a.height == nil && a.mines == nil {
            (a.preset, a.width, a.height, a.mines) = (defaults.preset, defaults.width, defaults.height, defaults.mines)
        }
        a.noGuess = a.noGuess ?? defaults.noGuess
        a.questionMarks = a.questionMarks ?? defaults.questionMarks
        let start: Cell?
        switch (a.startX, a.startY) {
        case let (x?, y?): start = Cell(x: x, y: y)
        case (nil, nil): start = nil
        default: throw ControlError.badArguments("give both startX and startY, or neither")
        }
        let noGuess = a.noGuess ?? false
        let parameters: GameParameters
        do {
            if let presetName = a.preset {
                guard a.width == nil, a.height == nil, a.mines == nil else {
                    throw ControlError.badArguments("give a preset or width, height and mines, not both")
                }
                guard let preset = Preset(rawValue: presetName.lowercased()) else {
                    throw ControlError(
                        code: "bad-parameters",
                        message: "unknown preset '\(presetName)' (one of: \(Preset.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                parameters = try GameParameters(preset: preset, start: start, noGuess: noGuess)
            } else if a.width == nil && a.height == nil && a.mines == nil {
                parameters = try GameParameters(preset: .beginner, start: start, noGuess: noGuess)
            } else {
                guard let w = a.width, let h = a.height, let m = a.mines else {
                    throw ControlError.badArguments("give width, height and mines together")
                }
                parameters = try GameParameters(width: w, height: h, mines: m, start: start, noGuess: noGuess)
            }
        } catch let error as ParameterError {
            throw ControlError(code: "bad-parameters", message: "\(error)")
        }
        return (parameters, a.seed ?? UInt64.random(in: 0...UInt64.max), a.questionMarks ?? false)
    }
}
