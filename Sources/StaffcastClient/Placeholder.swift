enum StaffcastClientPlaceholder {}
