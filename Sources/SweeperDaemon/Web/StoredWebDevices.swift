import FoundationEssentials
import SweeperStore
import SweeperWeb

/// The browsers paired on the home network, kept in the store's settings
/// (one JSON value: only each cookie's hash, never the cookie), and whether
/// the board is served there, as `sweeper web --lan` last chose.
struct StoredWebDevices: WebDeviceKeeper {
    let store: Store

    /// The setting that holds the paired devices.
    static let devicesSetting = "web.devices"
    /// The setting that holds `sweeper web --lan`'s choice (`on`, `off`).
    static let lanSetting = "web.lan"

    func devices() -> [WebDevice] {
        guard let text = (try? store.setting(Self.devicesSetting)) ?? nil else { return [] }
        return (try? JSONDecoder().decode([WebDevice].self, from: Data(text.utf8))) ?? []
    }

    func keep(_ devices: [WebDevice]) throws {
        let data = try JSONEncoder().encode(devices)
        try store.setSetting(Self.devicesSetting, String(decoding: data, as: UTF8.self))
    }

    /// Whether the board is served to the home network: the choice made at
    /// run time, else the config file's.
    func lan(default configured: Bool) -> Bool {
        switch (try? store.setting(Self.lanSetting)) ?? nil {
        case "on": true
        case "off": false
        default: configured
        }
    }

    /// Keeps a choice made at run time over the config file's.
    func setLAN(_ on: Bool) throws {
        try store.setSetting(Self.lanSetting, on ? "on" : "off")
    }
}
