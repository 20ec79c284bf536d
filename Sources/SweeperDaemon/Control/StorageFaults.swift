import SweeperControl
import SweeperStore

extension ControlError {
    /// A store failure as an error answer, with a code a client can act on:
    /// `storage-full`, `storage-read-only`, `storage-io-error`,
    /// `storage-damaged`, or `store-failure` for anything else. The message
    /// is the store's own sentence (it names the database file and says that
    /// nothing was saved).
    static func store(_ error: StoreError) -> ControlError {
        let code: String
        switch error {
        case .full: code = "storage-full"
        case .readOnly: code = "storage-read-only"
        case .ioError: code = "storage-io-error"
        case .corrupt: code = "storage-damaged"
        case .newerSchema, .stateDirectory, .database: code = "store-failure"
        }
        return ControlError(code: code, message: "\(error)")
    }
}
