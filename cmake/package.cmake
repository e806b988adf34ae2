# `make install` / CPack DEB layout of a Debian package (scripts/package builds it):
#   /usr/bin/portcullis                       the operator's command
#   /usr/lib/portcullis/portcullis-<pool>      the worker pools
#   /lib/systemd/system/portcullis*            the hardened units of systemd/, paths rewritten
#   /etc/nginx/portcullis/*.conf               the nginx includes (conffiles)
#   /usr/share/portcullis/                     production.conf and an example portcullis.conf
#   /usr/share/doc/portcullis/                 operations.md, README.md
# The maintainer scripts (packaging/debian) create the `portcullis` system user and
# /etc/portcullis; nothing is enabled or started until the operator has configured it.
include(GNUInstallDirs)
# `cpack` installs what the install rules name, not every target (tests, benchmarks).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# Every binary a unit of systemd/ starts: the FastCGI pools and the webhook delivery process.
set(PORTCULLIS_POOLS wellknown oauth api scim sso admin webhooks demo-mcp)
install(TARGETS portcullis RUNTIME DESTINATION bin COMPONENT portcullis)
# `cmake --build … --target portcullis-package-binaries` builds exactly what the package holds
# (scripts/package), without the tests and benchmarks.
add_custom_target(portcullis-package-binaries DEPENDS portcullis)
foreach(pool IN LISTS PORTCULLIS_POOLS)
  install(TARGETS portcullis-${pool} RUNTIME DESTINATION lib/portcullis COMPONENT portcullis)
  add_dependencies(portcullis-package-binaries portcullis-${pool})
endforeach()

# The units name /usr/local (the by-hand install of docs/operations.md §1); the package puts
# the binaries under /usr.
file(GLOB unit_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/systemd/portcullis*)
foreach(unit IN LISTS unit_files)
  get_filename_component(name ${unit} NAME)
  file(READ ${unit} text)
  string(REPLACE "/usr/local/lib/portcullis/" "/usr/lib/portcullis/" text "${text}")
  string(REPLACE "/usr/local/bin/portcullis " "/usr/bin/portcullis " text "${text}")
  string(REPLACE "/usr/local/share/doc/portcullis/" "/usr/share/doc/portcullis/" text "${text}")
  file(WRITE ${CMAKE_BINARY_DIR}/package/systemd/${name} "${text}")
  install(FILES ${CMAKE_BINARY_DIR}/package/systemd/${name} DESTINATION /lib/systemd/system
          COMPONENT portcullis)
endforeach()

file(GLOB nginx_includes CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/nginx/portcullis/*.conf)
install(FILES ${nginx_includes} DESTINATION /etc/nginx/portcullis COMPONENT portcullis)
# Everything under /etc is a conffile: an upgrade keeps the operator's edits (dpkg asks).
set(conffiles "")
foreach(f IN LISTS nginx_includes)
  get_filename_component(name ${f} NAME)
  string(APPEND conffiles "/etc/nginx/portcullis/${name}\n")
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/package/conffiles "${conffiles}")
install(FILES ${PROJECT_SOURCE_DIR}/nginx/production.conf
              ${PROJECT_SOURCE_DIR}/packaging/portcullis.conf.example
        DESTINATION share/portcullis COMPONENT portcullis)
install(FILES ${PROJECT_SOURCE_DIR}/docs/operations.md ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION share/doc/portcullis COMPONENT portcullis)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME portcullis)
set(CPACK_PACKAGE_VENDOR "Portcullis")
set(CPACK_PACKAGE_CONTACT "Portcullis maintainers <portcullis@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Authorization server for MCP servers (OAuth 2.1, SCIM 2.0)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The shared libraries' packages (libfcgi0ldbl, libjsoncpp25, libmysqlcppconn7v5, libcurl4,
# libssl3...) come from dpkg-shlibdeps; libfcgi at the version that fixes CVE-2025-23016.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, libfcgi0ldbl (>= 2.4.2-2+deb12u1)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "nginx, mariadb-client")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "mariadb-server, galera-4")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
    ${PROJECT_SOURCE_DIR}/packaging/debian/postrm
    ${CMAKE_BINARY_DIR}/package/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
