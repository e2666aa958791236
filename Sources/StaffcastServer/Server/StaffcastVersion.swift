/// The version staffcast reports in status and `--version`.
public enum StaffcastVersion {
    public static let current = "0.2.0"
}
