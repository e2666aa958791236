/// The `sql/` migrations compiled into the binary, so an installed `staffcast` runs from any
/// folder. `sql/` stays the source of truth: `Sources/StaffcastPostgres/Migrations` is a
/// symlink to it, and SwiftPM's `.embedInCode` rule (Package.swift) turns each file into a
/// byte array of `PackageResources` at build time.
///
/// SwiftPM cannot list what it embedded, so each file is named here once. A new migration
/// must be added below: `EmbeddedMigrationsTests` fails, naming the file, until it is (it
/// compares this set with `sql/` byte for byte).
public enum EmbeddedMigrations {
    /// File name and contents of every embedded migration. (SwiftPM names a resource after its
    /// file, with a leading digit and every dot turned into `_`: 001_schema.sql → _01_schema_sql.)
    public static let files: [(name: String, bytes: [UInt8])] = [
        ("001_schema.sql", PackageResources._01_schema_sql),
        ("002_audit.sql", PackageResources._02_audit_sql),
        ("003_presence.sql", PackageResources._03_presence_sql),
        ("004_tokens.sql", PackageResources._04_tokens_sql),
        ("005_read_state.sql", PackageResources._05_read_state_sql),
        ("006_roles.sql", PackageResources._06_roles_sql),
        ("007_emergencies.sql", PackageResources._07_emergencies_sql),
        ("008_toolbox.sql", PackageResources._08_toolbox_sql),
        ("009_invites.sql", PackageResources._09_invites_sql),
        ("010_fast_checks.sql", PackageResources._10_fast_checks_sql),
        ("011_audiences.sql", PackageResources._11_audiences_sql),
        ("012_reach.sql", PackageResources._12_reach_sql),
        ("013_send_path.sql", PackageResources._13_send_path_sql),
        ("014_local_fanout.sql", PackageResources._14_local_fanout_sql),
        ("015_send_plans.sql", PackageResources._15_send_plans_sql),
        ("016_token_managers.sql", PackageResources._16_token_managers_sql),
        ("017_change_catch_up.sql", PackageResources._17_change_catch_up_sql),
        ("018_current_access.sql", PackageResources._18_current_access_sql),
        ("019_push_tokens.sql", PackageResources._19_push_tokens_sql),
        ("020_invite_gate.sql", PackageResources._20_invite_gate_sql),
        ("021_corrections.sql", PackageResources._21_corrections_sql),
        ("022_revoke_lock_order.sql", PackageResources._22_revoke_lock_order_sql),
    ]
}
