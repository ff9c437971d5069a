import type { Artist } from '../model/artist.ts'
import type { Field } from './forms.ts'

/** The fields of an artist, as the forms to add and to edit one show them. */
export const artistFormFields = (artist?: Artist): Field[] => [
  { name: 'name', label: 'Name', required: true, value: artist?.name, autocomplete: 'off' },
  { name: 'band', label: 'Band', value: artist?.band, autocomplete: 'off' },
  { name: 'description', label: 'Description', type: 'textarea', value: artist?.description },
  {
    name: 'image',
    label: 'Picture',
    type: 'url',
    value: artist?.image,
    hint: 'An http(s) URL or a path on this server. These pages show only pictures from this server, and the generated cover otherwise.',
  },
]
