# The layer rule: src/<layer> and tests/<layer> include headers of their own
# layer and of the layers below it only. And the folder rule: in a layer with
# ordered sub-folders, src/<layer>/<folder>/ includes headers of its own folder
# and of the folders before it only, never a file directly in src/<layer>/
# (those wire the folders together), and every sub-folder is in the order.
# Run by the layer_includes test:
#   cmake -DSOURCE_DIR=<repo> -DRULES="<layer>=<below>,<below>...|..."
#         -DFOLDERS="<layer>=<lowest>,<next>...|..." -P check_layer_includes.cmake
# RULES comes from parley_layer() in CMakeLists.txt, so that it says what the
# link dependencies say; any folder of src/ counts as a layer. FOLDERS comes
# from parley_layer_folders().
cmake_minimum_required(VERSION 3.25)

file(GLOB layer_dirs LIST_DIRECTORIES true RELATIVE ${SOURCE_DIR}/src ${SOURCE_DIR}/src/*)
set(layers "")
foreach(d ${layer_dirs})
  if(IS_DIRECTORY ${SOURCE_DIR}/src/${d})
    list(APPEND layers ${d})
  endif()
endforeach()

string(REPLACE "|" ";" rules "${RULES}")
set(checked 0)
set(broken 0)
foreach(rule ${rules})
  string(REGEX MATCH "^([^=]+)=(.*)$" _ "${rule}")
  set(layer ${CMAKE_MATCH_1})
  string(REPLACE "," ";" allowed "${CMAKE_MATCH_2}")
  list(APPEND allowed ${layer})
  file(GLOB_RECURSE files ${SOURCE_DIR}/src/${layer}/*.h ${SOURCE_DIR}/src/${layer}/*.cpp
       ${SOURCE_DIR}/tests/${layer}/*.h ${SOURCE_DIR}/tests/${layer}/*.cpp)
  foreach(f ${files})
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"/]+/")
    foreach(line ${includes})
      string(REGEX MATCH "\"([^\"/]+)/([^\"]*)\"" _ "${line}")
      set(included ${CMAKE_MATCH_1})
      if(included IN_LIST layers AND NOT included IN_LIST allowed)
        file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
        list(REMOVE_ITEM allowed ${layer})
        list(JOIN allowed " " below)
        message(SEND_ERROR "${rel} includes ${included}/${CMAKE_MATCH_2}: layer ${layer} may include only itself "
                           "and the layers it links (${below}); see parley_layer() in CMakeLists.txt")
        list(APPEND allowed ${layer})
        math(EXPR broken "${broken} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(broken GREATER 0)
  message(FATAL_ERROR "${broken} includes break the layer rule")
endif()
list(JOIN layers " " layer_names)
message(STATUS "layer rule: ${checked} files checked (layers: ${layer_names})")

string(REPLACE "|" ";" folder_rules "${FOLDERS}")
foreach(rule ${folder_rules})
  string(REGEX MATCH "^([^=]+)=(.*)$" _ "${rule}")
  set(layer ${CMAKE_MATCH_1})
  string(REPLACE "," ";" order "${CMAKE_MATCH_2}")
  string(REPLACE "," " < " order_text "${CMAKE_MATCH_2}")
  set(root ${SOURCE_DIR}/src/${layer})
  set(see "see parley_layer_folders(${layer} ...) in CMakeLists.txt")
  file(GLOB entries LIST_DIRECTORIES true RELATIVE ${root} ${root}/*)
  foreach(d ${entries})
    if(IS_DIRECTORY ${root}/${d} AND NOT d IN_LIST order)
      message(SEND_ERROR "src/${layer}/${d}/ is not in the order of ${layer}'s folders (${order_text}); ${see}")
      math(EXPR broken "${broken} + 1")
    endif()
  endforeach()
  set(checked 0)
  file(GLOB_RECURSE files RELATIVE ${root} ${root}/*.h ${root}/*.cpp)
  foreach(f ${files})
    if(NOT f MATCHES "^([^/]+)/")  # directly in src/<layer>: wires the folders, may include any
      continue()
    endif()
    set(folder ${CMAKE_MATCH_1})
    list(FIND order ${folder} level)
    if(level LESS 0)
      continue()  # reported above
    endif()
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${root}/${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"${layer}/")
    foreach(line ${includes})
      string(REGEX MATCH "\"${layer}/([^\"]*)\"" _ "${line}")
      set(path ${CMAKE_MATCH_1})
      if(path MATCHES "^([^/]+)/")
        set(included ${CMAKE_MATCH_1})
        list(FIND order ${included} included_level)
        if(included_level GREATER level)
          message(SEND_ERROR "src/${layer}/${f} includes ${layer}/${path}: ${layer}/${folder}/ may include only "
                             "its own folder and the folders before it (${order_text}), and ${included}/ comes "
                             "after it; ${see}")
          math(EXPR broken "${broken} + 1")
        endif()
      else()
        message(SEND_ERROR "src/${layer}/${f} includes ${layer}/${path}: the files directly in src/${layer}/ "
                           "wire its folders together, and no folder includes them; ${see}")
        math(EXPR broken "${broken} + 1")
      endif()
    endforeach()
  endforeach()
  if(broken GREATER 0)
    message(FATAL_ERROR "${broken} breaches of the folder order of src/${layer}/ (${order_text})")
  endif()
  message(STATUS "folder rule: ${checked} files of src/${layer}/ checked (${order_text})")
endforeach()
